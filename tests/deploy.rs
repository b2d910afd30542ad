//! What ships under `deploy/` holds what the README promises: read-only RBAC on exactly the
//! watched kinds, a hardened Deployment serving on the Service's port, and alert rules that
//! Prometheus's own tool accepts and whose unit tests pass.

use restorewatch::model::KINDS;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

fn deploy(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy")
        .join(path)
}

fn manifests() -> Vec<Value> {
    let text = std::fs::read_to_string(deploy("kubernetes/restorewatch.yaml")).expect("manifest");
    serde_saphyr::from_multiple::<Value>(&text).expect("the manifests are valid YAML")
}

fn one<'a>(docs: &'a [Value], kind: &str) -> &'a Value {
    let found: Vec<&Value> = docs.iter().filter(|d| d["kind"] == kind).collect();
    assert_eq!(found.len(), 1, "exactly one {kind}");
    found[0]
}

#[test]
fn cluster_role_reads_exactly_the_watched_kinds() {
    let docs = manifests();
    let role = one(&docs, "ClusterRole");
    let mut granted = BTreeSet::new();
    for rule in role["rules"].as_array().expect("rules") {
        let verbs: BTreeSet<&str> = rule["verbs"]
            .as_array()
            .expect("verbs")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(
            verbs,
            BTreeSet::from(["get", "list", "watch"]),
            "read-only verbs only: {rule}"
        );
        for g in rule["apiGroups"].as_array().expect("groups") {
            for r in rule["resources"].as_array().expect("resources") {
                granted.insert((
                    g.as_str().unwrap_or("?").to_string(),
                    r.as_str().unwrap_or("?").to_string(),
                ));
            }
        }
    }
    let watched: BTreeSet<(String, String)> = KINDS
        .iter()
        .map(|k| (k.group.to_string(), k.plural.to_string()))
        .collect();
    assert_eq!(
        granted, watched,
        "the ClusterRole grants what serve watches, no more"
    );
    let binding = one(&docs, "ClusterRoleBinding");
    assert_eq!(binding["roleRef"]["name"], role["metadata"]["name"]);
    let sa = one(&docs, "ServiceAccount");
    assert_eq!(binding["subjects"][0]["name"], sa["metadata"]["name"]);
    assert_eq!(
        binding["subjects"][0]["namespace"],
        sa["metadata"]["namespace"]
    );
}

#[test]
fn deployment_is_hardened_sized_and_matches_the_service() {
    let docs = manifests();
    let dep = one(&docs, "Deployment");
    let pod = &dep["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(
        pod["serviceAccountName"],
        one(&docs, "ServiceAccount")["metadata"]["name"]
    );
    let c = &pod["containers"][0];
    assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], false);
    assert_eq!(c["securityContext"]["capabilities"]["drop"][0], "ALL");
    for what in ["requests", "limits"] {
        for res in ["cpu", "memory"] {
            assert!(c["resources"][what][res].is_string(), "{what}.{res} is set");
        }
    }
    let args: Vec<&str> = c["args"]
        .as_array()
        .expect("args")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(args.first(), Some(&"serve"));
    let listen = args
        .windows(2)
        .find(|w| w[0] == "--listen")
        .map(|w| w[1])
        .expect("--listen");
    let port: u64 = listen
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port");
    assert_eq!(c["ports"][0]["containerPort"], port);
    for probe in ["readinessProbe", "livenessProbe"] {
        assert_eq!(c[probe]["httpGet"]["port"], c["ports"][0]["name"]);
    }
    let svc = one(&docs, "Service");
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], c["ports"][0]["name"]);
    assert_eq!(
        svc["spec"]["selector"],
        dep["spec"]["template"]["metadata"]["labels"]
    );
    // The image's command line is the same `serve`, so the container runs what we tested.
    let containerfile = std::fs::read_to_string(deploy("Containerfile")).expect("Containerfile");
    assert!(containerfile.contains("CMD [\"serve\""), "{containerfile}");
    assert!(containerfile.matches("FROM ").count() >= 2, "multi-stage");
}

fn promtool(args: &[&str]) {
    let out = Command::new("promtool")
        .args(args)
        .current_dir(deploy("prometheus"))
        .output()
        .expect("promtool is required (Debian: apt-get install prometheus; .ci/run installs it)");
    assert!(
        out.status.success(),
        "promtool {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn alert_rules_check_and_their_unit_tests_pass() {
    promtool(&["check", "rules", "restorewatch-rules.yaml"]);
    promtool(&["test", "rules", "restorewatch-rules.test.yaml"]);
}
