//! An object as a list or watch delivers it, read once into a JSON value: what the typed
//! parse (`model::parse_watched`) reads. `DynamicObject` read the metadata into typed fields
//! (every managedFields entry, label and annotation) and restorewatch then serialized them
//! back into a value: on the initial lists a third of the time went to malloc and free
//! (perf, issue 28). Here the watcher gets only the metadata it reads itself.

use kube::Resource;
use kube::api::{ApiResource, ObjectMeta};
use kube::core::DynamicResourceScope;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::borrow::Cow;

#[derive(Debug, Clone)]
pub struct RawObject {
    /// Name, namespace, uid and resourceVersion only: what the watcher and the store key need.
    pub metadata: ObjectMeta,
    /// The whole object as sent.
    pub value: Value,
}

impl<'de> Deserialize<'de> for RawObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        let meta = |key: &str| {
            value
                .get("metadata")
                .and_then(|m| m.get(key))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let metadata = ObjectMeta {
            name: meta("name"),
            namespace: meta("namespace"),
            uid: meta("uid"),
            resource_version: meta("resourceVersion"),
            ..ObjectMeta::default()
        };
        Ok(RawObject { metadata, value })
    }
}

impl Resource for RawObject {
    type DynamicType = ApiResource;
    type Scope = DynamicResourceScope;

    fn group(dt: &ApiResource) -> Cow<'_, str> {
        dt.group.as_str().into()
    }

    fn version(dt: &ApiResource) -> Cow<'_, str> {
        dt.version.as_str().into()
    }

    fn kind(dt: &ApiResource) -> Cow<'_, str> {
        dt.kind.as_str().into()
    }

    fn api_version(dt: &ApiResource) -> Cow<'_, str> {
        dt.api_version.as_str().into()
    }

    fn plural(dt: &ApiResource) -> Cow<'_, str> {
        dt.plural.as_str().into()
    }

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_whole_object_and_the_metadata_the_watcher_reads() {
        let text = r#"{"apiVersion":"v1","kind":"PersistentVolumeClaim",
            "metadata":{"name":"data","namespace":"t","uid":"u-1","resourceVersion":"42",
                "managedFields":[{"manager":"m","operation":"Update"}]},
            "spec":{"volumeName":"pv-1"}}"#;
        let o: RawObject = serde_json::from_str(text).expect("an object");
        assert_eq!(o.metadata.name.as_deref(), Some("data"));
        assert_eq!(o.metadata.namespace.as_deref(), Some("t"));
        assert_eq!(o.metadata.uid.as_deref(), Some("u-1"));
        assert_eq!(o.metadata.resource_version.as_deref(), Some("42"));
        assert_eq!(o.value["metadata"]["managedFields"][0]["manager"], "m");
        assert_eq!(o.value["spec"]["volumeName"], "pv-1");
    }

    #[test]
    fn an_object_without_metadata_or_with_wrong_types_is_read_not_refused() {
        let o: RawObject =
            serde_json::from_str(r#"{"metadata":{"name":7},"spec":[]}"#).expect("read");
        assert_eq!(o.metadata.name, None);
        let o: RawObject = serde_json::from_str(r#"{"kind":"X"}"#).expect("read");
        assert_eq!(o.metadata, ObjectMeta::default());
    }
}
