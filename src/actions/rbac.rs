//! Asking the API server, before a dialog opens, whether the user may make each write.

use super::Op;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};

/// A write the user may not make: the missing verb on the resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    pub verb: String,
    pub resource: String,
    pub namespace: String,
    pub reason: String,
}

impl std::fmt::Display for Denied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ns = if self.namespace.is_empty() {
            String::new()
        } else {
            format!(" in {}", self.namespace)
        };
        write!(f, "no {} on {}{ns}", self.verb, self.resource)?;
        if !self.reason.is_empty() {
            write!(f, " ({})", self.reason)?;
        }
        Ok(())
    }
}

/// One SelfSubjectAccessReview per distinct (verb, resource, namespace) of the plan.
pub async fn check(client: &kube::Client, ops: &[Op]) -> anyhow::Result<Vec<Denied>> {
    let api: Api<SelfSubjectAccessReview> = Api::all(client.clone());
    let mut asked = std::collections::BTreeSet::new();
    let mut denied = Vec::new();
    for op in ops {
        let target = op.target();
        let info = target.kind.info();
        let key = (op.verb(), info.plural, target.namespace.clone());
        if !asked.insert(key) {
            continue;
        }
        let review = SelfSubjectAccessReview {
            spec: SelfSubjectAccessReviewSpec {
                resource_attributes: Some(ResourceAttributes {
                    group: Some(info.group.to_string()),
                    resource: Some(info.plural.to_string()),
                    verb: Some(op.verb().to_string()),
                    namespace: (!target.namespace.is_empty()).then(|| target.namespace.to_string()),
                    name: Some(target.name.to_string()),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let answer = api
            .create(&PostParams::default(), &review)
            .await
            .map_err(|e| anyhow::anyhow!(super::write::brief(&e)))?;
        let status = answer.status.unwrap_or_default();
        if !status.allowed {
            denied.push(Denied {
                verb: op.verb().to_string(),
                resource: info.plural.to_string(),
                namespace: target.namespace.to_string(),
                reason: status.reason.unwrap_or_default(),
            });
        }
    }
    Ok(denied)
}
