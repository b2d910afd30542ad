//! What ships under `deploy/` holds what the README promises: read-only RBAC on exactly the
//! watched kinds, a hardened Deployment serving on the Service's port, alert rules that
//! Prometheus's own tool accepts and whose unit tests pass, and every kustomize variant
//! rendering into objects the cluster's schemas accept, its rule objects generated from the one
//! rules file.

mod monitoring_support;

use monitoring_support::{one, render, strings, succeed};
use restorewatch::cluster::controller_image::{
    BACKUP_CONTROLLER_DEPLOYMENT, BACKUP_CONTROLLER_NAMESPACE, STRATEGY_CONTROLLER_DEPLOYMENT,
};
use restorewatch::cluster::velero_scope;
use restorewatch::model::KINDS;
use restorewatch::model::names::VELERO_NAMESPACE;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

fn deploy(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy")
        .join(path)
}

/// The one object of this kind and name.
fn named<'a>(docs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    let found: Vec<&Value> = docs
        .iter()
        .filter(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .collect();
    assert_eq!(found.len(), 1, "exactly one {kind} {name}");
    found[0]
}

fn manifests() -> Vec<Value> {
    render("base")
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
    let read_in_velero = |k: &&restorewatch::model::KindInfo| {
        velero_scope::read_in(k.kind, None).namespace.as_deref() == Some(VELERO_NAMESPACE)
    };
    let watched: BTreeSet<(String, String)> = KINDS
        .iter()
        .filter(|k| !read_in_velero(k))
        .map(|k| (k.group.to_string(), k.plural.to_string()))
        .collect();
    assert_eq!(
        granted, watched,
        "the ClusterRole grants what serve watches everywhere, no more"
    );
    // Velero's kinds: read in Velero's namespace only, granted there only.
    let velero = named(&docs, "Role", "restorewatch-velero");
    assert_eq!(velero["metadata"]["namespace"], VELERO_NAMESPACE);
    let kinds: Vec<&str> = KINDS
        .iter()
        .filter(read_in_velero)
        .map(|k| k.plural)
        .collect();
    assert_eq!(
        velero["rules"],
        serde_json::json!([{"apiGroups": ["velero.io"], "resources": kinds,
            "verbs": ["get", "list", "watch"]}])
    );
    let vb = named(&docs, "RoleBinding", "restorewatch-velero");
    assert_eq!(vb["metadata"]["namespace"], VELERO_NAMESPACE);
    assert_eq!(vb["roleRef"]["name"], "restorewatch-velero");
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
fn the_controller_image_is_granted_as_one_get_of_the_one_deployment_restorewatch_reads() {
    for variant in VARIANTS {
        let docs = render(variant);
        let role = named(&docs, "Role", "restorewatch-controller-image");
        assert_eq!(
            role["metadata"]["namespace"], BACKUP_CONTROLLER_NAMESPACE,
            "{variant}: the Role sits where the Deployment is, whatever the variant's namespace"
        );
        assert_eq!(
            role["rules"],
            serde_json::json!([{"apiGroups": ["apps"], "resources": ["deployments"],
                "resourceNames": [STRATEGY_CONTROLLER_DEPLOYMENT, BACKUP_CONTROLLER_DEPLOYMENT], "verbs": ["get"]}]),
            "{variant}: get on that one name, nothing else"
        );
        let binding = named(&docs, "RoleBinding", "restorewatch-controller-image");
        assert_eq!(
            binding["metadata"]["namespace"],
            BACKUP_CONTROLLER_NAMESPACE
        );
        assert_eq!(binding["roleRef"]["kind"], "Role");
        assert_eq!(binding["roleRef"]["name"], role["metadata"]["name"]);
        let sa = one(&docs, "ServiceAccount");
        assert_eq!(
            binding["subjects"],
            serde_json::json!([{"kind": "ServiceAccount", "name": sa["metadata"]["name"],
                "namespace": sa["metadata"]["namespace"]}])
        );
    }
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
    assert!(
        containerfile.contains("FROM scratch"),
        "nothing but the binary"
    );
    assert!(
        containerfile.contains("USER 65532:65532"),
        "{containerfile}"
    );
}

fn promtool(args: &[&str]) {
    succeed(
        Command::new("promtool")
            .args(args)
            .current_dir(deploy("prometheus")),
        "promtool is required (Debian: apt-get install prometheus; .ci/run installs it)",
    );
}

#[test]
fn alert_rules_check_and_their_unit_tests_pass() {
    promtool(&["check", "rules", "restorewatch-rules.yaml"]);
    promtool(&["test", "rules", "restorewatch-rules.test.yaml"]);
}

const VARIANTS: [&str; 3] = ["base", "victoriametrics", "prometheus-operator"];

/// The operators' CRDs as Cozystack vendors them (`../shared/reference/crds-monitoring`).
fn monitoring_crds() -> Vec<Value> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/crds-monitoring");
    let mut crds = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("the vendored monitoring CRDs") {
        let text = std::fs::read_to_string(entry.expect("entry").path()).expect("CRD");
        crds.extend(serde_saphyr::from_multiple::<Value>(&text).expect("CRD YAML"));
    }
    assert!(crds.len() >= 6, "{} CRDs in {}", crds.len(), dir.display());
    crds
}

/// A core kind checked the way the API server decodes it: into its typed struct (types and
/// required fields), and back, so that a field the type does not know (a typo, a field in the
/// wrong place) shows as lost instead of being silently dropped as it would be on apply.
fn core_round_trip<T>(obj: &Value) -> Result<(), String>
where
    T: serde::de::DeserializeOwned + serde::Serialize,
{
    let typed: T = serde_json::from_value(obj.clone()).map_err(|e| e.to_string())?;
    let back = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
    if &back == obj {
        Ok(())
    } else {
        Err(format!(
            "fields not in the schema were dropped: {back:#} != {obj:#}"
        ))
    }
}

fn core_violation(obj: &Value) -> Option<Result<(), String>> {
    use k8s_openapi::api::{apps::v1 as apps, core::v1 as core, rbac::v1 as rbac};
    Some(match (obj["apiVersion"].as_str()?, obj["kind"].as_str()?) {
        ("v1", "Namespace") => core_round_trip::<core::Namespace>(obj),
        ("v1", "ServiceAccount") => core_round_trip::<core::ServiceAccount>(obj),
        ("v1", "Service") => core_round_trip::<core::Service>(obj),
        ("v1", "ConfigMap") => core_round_trip::<core::ConfigMap>(obj),
        ("apps/v1", "Deployment") => core_round_trip::<apps::Deployment>(obj),
        ("networking.k8s.io/v1", "NetworkPolicy") => {
            core_round_trip::<k8s_openapi::api::networking::v1::NetworkPolicy>(obj)
        }
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => {
            core_round_trip::<rbac::ClusterRole>(obj)
        }
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => {
            core_round_trip::<rbac::ClusterRoleBinding>(obj)
        }
        ("rbac.authorization.k8s.io/v1", "Role") => core_round_trip::<rbac::Role>(obj),
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => {
            core_round_trip::<rbac::RoleBinding>(obj)
        }
        _ => return None,
    })
}

/// Why `obj` would not be accepted: its CRD's schema, else its core type; a kind neither knows
/// is a failure too (nothing may ship unchecked).
fn schema_problems(obj: &Value, crds: &[Value]) -> Vec<String> {
    let api_version = obj["apiVersion"].as_str().unwrap_or("");
    let kind = obj["kind"].as_str().unwrap_or("");
    let crd = crds.iter().find_map(|c| {
        (c.pointer("/spec/names/kind") == Some(&Value::from(kind)))
            .then(|| restorewatch::sim::crd_schema::schema_for(c, api_version))
            .flatten()
    });
    if let Some(schema) = crd {
        return restorewatch::sim::crd_schema::violations(schema, obj)
            .into_iter()
            .map(|(p, m)| format!("{p}: {m}"))
            .collect();
    }
    match core_violation(obj) {
        Some(Ok(())) => Vec::new(),
        Some(Err(e)) => vec![e],
        None => vec![format!("no schema known for {api_version} {kind}")],
    }
}

fn assert_accepted(obj: &Value, crds: &[Value], variant: &str) {
    let problems = schema_problems(obj, crds);
    assert!(
        problems.is_empty(),
        "{variant}: {} {}: {problems:#?}",
        obj["kind"],
        obj["metadata"]["name"]
    );
}

#[test]
fn every_variant_renders_into_objects_their_schemas_accept() {
    let crds = monitoring_crds();
    for variant in VARIANTS {
        let docs = render(variant);
        assert!(docs.len() >= 6, "{variant}: {} objects", docs.len());
        for obj in &docs {
            assert_accepted(obj, &crds, variant);
            let labels = &obj["metadata"]["labels"];
            assert_eq!(labels["app.kubernetes.io/name"], "restorewatch", "{obj}");
            assert_eq!(
                labels["app.kubernetes.io/instance"], "restorewatch",
                "{obj}"
            );
            if obj["kind"] == "Role" || obj["kind"] == "RoleBinding" {
                // The grants in the backup controller's and Velero's namespaces (checked above).
                let ns = obj["metadata"]["namespace"].as_str().unwrap_or_default();
                assert!(
                    [BACKUP_CONTROLLER_NAMESPACE, VELERO_NAMESPACE].contains(&ns),
                    "{obj}"
                );
            } else if obj["kind"] != "Namespace"
                && obj["kind"] != "ClusterRole"
                && obj["kind"] != "ClusterRoleBinding"
            {
                assert_eq!(obj["metadata"]["namespace"], "restorewatch", "{obj}");
            }
        }
    }
}

#[test]
fn the_schema_check_refuses_a_misplaced_field() {
    // The check above is only worth something if it can fail: the same objects, each spoiled.
    let crds = monitoring_crds();
    for variant in VARIANTS {
        for mut obj in render(variant) {
            let kind = obj["kind"].clone();
            obj["spec"]["notAField"] = Value::from(1);
            if kind == "ServiceAccount" || kind == "ClusterRole" || kind == "ClusterRoleBinding" {
                obj["notAField"] = Value::from(1);
            }
            assert!(
                !schema_problems(&obj, &crds).is_empty(),
                "{variant}: a spoiled {kind} passed"
            );
        }
    }
}

/// The scrape selects the Service, on its port named `metrics`, at /metrics.
fn assert_scrape_finds_the_service(docs: &[Value], kind: &str) {
    let scrape = one(docs, kind);
    let svc = one(docs, "Service");
    assert_eq!(
        scrape["metadata"]["namespace"],
        svc["metadata"]["namespace"]
    );
    let wanted = scrape["spec"]["selector"]["matchLabels"]
        .as_object()
        .expect("matchLabels");
    for (k, v) in wanted {
        assert_eq!(
            &svc["metadata"]["labels"][k], v,
            "{kind} selects the Service by {k}"
        );
    }
    let ep = &scrape["spec"]["endpoints"][0];
    assert_eq!(ep["port"], "metrics");
    assert_eq!(svc["spec"]["ports"][0]["name"], "metrics");
    assert_eq!(ep["path"], "/metrics");
}

/// Cozystack's VMAgent, the one scraper (`cozystack-monitoring.md`: monitoring-agents).
const SCRAPER_NAMESPACE: &str = "cozy-monitoring";

/// Issue 27, point 6: `/report` names every tenant's restores and history, unauthenticated; the
/// shipped pod answers it to no one, and only the scraper's namespace reaches the metrics port.
#[test]
fn every_variant_serves_no_report_and_admits_only_the_scrapers_namespace() {
    for variant in VARIANTS {
        let docs = render(variant);
        let dep = one(&docs, "Deployment");
        let c = &dep["spec"]["template"]["spec"]["containers"][0];
        let args: Vec<String> = strings(&c["args"])
            .into_iter()
            .map(str::to_string)
            .collect();
        assert!(
            args.iter().any(|a| a == "--no-report"),
            "{variant}: serve answers /report: {args:?}"
        );
        assert!(cli_accepts(&args), "{variant}: {args:?} is refused");

        let np = one(&docs, "NetworkPolicy");
        assert_eq!(np["metadata"]["namespace"], dep["metadata"]["namespace"]);
        // It selects restorewatch's pods, and limits what reaches them.
        let selects = np["spec"]["podSelector"]["matchLabels"]
            .as_object()
            .expect("a podSelector by labels");
        assert!(
            !selects.is_empty(),
            "{variant}: an empty selector picks every pod"
        );
        for (k, v) in selects {
            assert_eq!(
                &dep["spec"]["template"]["metadata"]["labels"][k], v,
                "{variant}: {k}"
            );
        }
        assert_eq!(
            strings(&np["spec"]["policyTypes"]),
            vec!["Ingress"],
            "{variant}"
        );
        let rules = np["spec"]["ingress"].as_array().expect("ingress rules");
        assert_eq!(rules.len(), 1, "{variant}: {rules:?}");
        let from = rules[0]["from"].as_array().expect("from");
        assert_eq!(from.len(), 1, "{variant}: one peer: {from:?}");
        let peer = from[0].as_object().expect("a peer");
        assert_eq!(
            peer.keys().map(String::as_str).collect::<Vec<_>>(),
            vec!["namespaceSelector"],
            "{variant}: only a namespace, no ipBlock: {peer:?}"
        );
        assert_eq!(
            peer["namespaceSelector"],
            serde_json::json!({"matchLabels": {"kubernetes.io/metadata.name": SCRAPER_NAMESPACE}}),
            "{variant}"
        );
        let ports = rules[0]["ports"].as_array().expect("ports");
        assert_eq!(ports.len(), 1, "{variant}");
        assert_eq!(
            ports[0]["port"], c["ports"][0]["name"],
            "{variant}: the metrics port"
        );
    }
}

/// Issue 27, point 11: a scrape that grows past what restorewatch should ever expose is
/// refused by the scraper rather than stored.
#[test]
fn each_scrape_object_sets_a_sample_limit() {
    for (variant, scrape) in [
        ("victoriametrics", "VMServiceScrape"),
        ("prometheus-operator", "ServiceMonitor"),
    ] {
        let docs = render(variant);
        let limit = one(&docs, scrape)["spec"]["sampleLimit"]
            .as_u64()
            .unwrap_or_else(|| panic!("{variant}: {scrape} has no sampleLimit"));
        assert!((10_000..=200_000).contains(&limit), "{variant}: {limit}");
    }
}

#[test]
fn each_operator_variant_scrapes_the_service_and_carries_the_rules() {
    let rules = rules_source();
    for (variant, scrape, rule) in [
        ("victoriametrics", "VMServiceScrape", "VMRule"),
        ("prometheus-operator", "ServiceMonitor", "PrometheusRule"),
    ] {
        let docs = render(variant);
        assert_scrape_finds_the_service(&docs, scrape);
        let obj = one(&docs, rule);
        assert_eq!(obj["spec"]["groups"], rules["groups"], "{variant}: {rule}");
        assert_eq!(obj["metadata"]["name"], "alerts-restorewatch");
    }
    assert!(
        render("base")
            .iter()
            .all(|d| d["kind"] != "VMRule" && d["kind"] != "PrometheusRule"),
        "the base assumes no operator"
    );
}

#[test]
fn alerts_follow_cozystack_style() {
    let rules = rules_source();
    let group = &rules["groups"][0];
    assert_eq!(
        group["name"], "restorewatch",
        "one group, named after the component"
    );
    for r in group["rules"].as_array().expect("rules") {
        let sev = r["labels"]["severity"].as_str().unwrap_or("");
        assert!(sev == "warning" || sev == "critical", "{r}");
        for a in ["summary", "description"] {
            assert!(
                r["annotations"][a].as_str().is_some_and(|s| !s.is_empty()),
                "{a}: {r}"
            );
        }
        assert!(
            r["for"].as_str().is_some_and(|f| f.ends_with('m')),
            "for: minutes: {r}"
        );
    }
}

const RULES_FILE: &str = "prometheus/restorewatch-rules.yaml";

fn rules_source() -> Value {
    let text = std::fs::read_to_string(deploy(RULES_FILE)).expect("rules");
    serde_saphyr::from_str(&text).expect("rules YAML")
}

/// The rule object for an operator: the rules file's `groups:` as its `spec`, verbatim, so the
/// three forms cannot say different things.
fn rule_object(api_version: &str, kind: &str) -> String {
    let text = std::fs::read_to_string(deploy(RULES_FILE)).expect("rules");
    let groups: String = text
        .lines()
        .skip_while(|l| !l.starts_with("groups:"))
        .map(|l| {
            if l.is_empty() {
                "\n".to_string()
            } else {
                format!("  {l}\n")
            }
        })
        .collect();
    assert!(!groups.is_empty(), "the rules file has groups:");
    format!(
        "# Generated from deploy/{RULES_FILE}, the one source of restorewatch's alerts: edit that\n\
         # file, then run RESTOREWATCH_UPDATE=1 cargo test --test deploy (a test fails on drift).\n\
         apiVersion: {api_version}\n\
         kind: {kind}\n\
         metadata:\n  name: alerts-restorewatch\n  labels:\n    \
         app.kubernetes.io/name: restorewatch\n    app.kubernetes.io/instance: restorewatch\n\
         spec:\n{groups}"
    )
}

#[test]
fn rule_objects_are_generated_from_the_one_rules_file() {
    let update = std::env::var_os("RESTOREWATCH_UPDATE").is_some();
    let mut drift = Vec::new();
    for (file, api_version, kind) in [
        (
            "kubernetes/components/victoriametrics/vmrule.yaml",
            "operator.victoriametrics.com/v1beta1",
            "VMRule",
        ),
        (
            "kubernetes/components/prometheus-operator/prometheusrule.yaml",
            "monitoring.coreos.com/v1",
            "PrometheusRule",
        ),
    ] {
        let want = rule_object(api_version, kind);
        let have = std::fs::read_to_string(deploy(file)).unwrap_or_default();
        if have != want {
            if update {
                std::fs::write(deploy(file), &want).expect("write");
            } else {
                drift.push(file);
            }
        }
    }
    assert!(
        drift.is_empty(),
        "{drift:?} differ from deploy/{RULES_FILE}: run RESTOREWATCH_UPDATE=1 cargo test --test deploy"
    );
}

fn dashboard() -> Value {
    let text = std::fs::read_to_string(deploy("grafana/restorewatch.json")).expect("dashboard");
    serde_json::from_str(&text).expect("the dashboard is JSON")
}

#[test]
fn the_dashboard_follows_cozystack_conventions() {
    let d = dashboard();
    assert_eq!(
        d["uid"], "restorewatch-restores",
        "a stable uid: links and imports keep working"
    );
    assert!(d["title"].as_str().is_some_and(|t| !t.is_empty()));
    let version = d["schemaVersion"].as_u64().unwrap_or(0);
    assert!((39..=41).contains(&version), "schemaVersion {version}");
    let vars = d["templating"]["list"].as_array().expect("variables");
    let ds = vars
        .iter()
        .find(|v| v["name"] == "DS_PROMETHEUS")
        .expect("a DS_PROMETHEUS variable");
    assert_eq!(
        (&ds["type"], &ds["query"]),
        (&Value::from("datasource"), &Value::from("prometheus"))
    );
    let panels = d["panels"].as_array().expect("panels");
    let mut ids = BTreeSet::new();
    for p in panels {
        assert!(ids.insert(p["id"].as_u64()), "panel ids are unique: {p}");
        if p["type"] == "row" {
            continue;
        }
        assert_eq!(p["datasource"]["uid"], "${DS_PROMETHEUS}", "{}", p["title"]);
        let targets = p["targets"].as_array().expect("targets");
        assert!(!targets.is_empty(), "{}", p["title"]);
        for t in targets {
            assert_eq!(t["datasource"]["uid"], "${DS_PROMETHEUS}", "{}", p["title"]);
            assert!(
                t["expr"].as_str().is_some_and(|e| !e.is_empty()),
                "{}",
                p["title"]
            );
        }
    }
}

#[test]
fn the_grafana_dashboard_object_carries_the_dashboard_and_fits_its_crd() {
    let crds = monitoring_crds();
    let docs = render("../grafana");
    for obj in &docs {
        assert_accepted(obj, &crds, "grafana");
    }
    let gd = one(&docs, "GrafanaDashboard");
    let cm = one(&docs, "ConfigMap");
    assert_eq!(gd["metadata"]["namespace"], cm["metadata"]["namespace"]);
    assert_eq!(gd["spec"]["configMapRef"]["name"], cm["metadata"]["name"]);
    let key = gd["spec"]["configMapRef"]["key"].as_str().expect("key");
    let carried: Value = serde_json::from_str(
        cm["data"][key]
            .as_str()
            .expect("the dashboard in the ConfigMap"),
    )
    .expect("JSON");
    assert_eq!(carried, dashboard());
    assert_eq!(
        gd["spec"]["instanceSelector"]["matchLabels"]["dashboards"],
        "grafana"
    );
}

/// `restorewatch <args> --help`: clap refuses an unknown flag or a missing value before it
/// prints the help, so this says whether a command line fits the real CLI.
fn cli_accepts(args: &[String]) -> bool {
    Command::new(env!("CARGO_BIN_EXE_restorewatch"))
        .args(args)
        .arg("--help")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_k9s_plugins_run_command_lines_restorewatch_accepts() {
    let text = std::fs::read_to_string(deploy("k9s/plugins.yaml")).expect("k9s plugins");
    let doc: Value = serde_saphyr::from_str(&text).expect("YAML");
    let plugins = doc["plugins"].as_object().expect("plugins");
    assert_eq!(plugins.len(), 2);
    let fill = |s: &str| {
        s.replace("$CONTEXT", "prod")
            .replace("$NAMESPACE", "tenant-a")
            .replace('"', "")
    };
    for (name, p) in plugins {
        let scopes: BTreeSet<&str> = strings(&p["scopes"]).into_iter().collect();
        assert_eq!(
            scopes,
            BTreeSet::from(["restorejobs", "persistentvolumeclaims", "clusters"]),
            "{name}"
        );
        let args: Vec<String> = strings(&p["args"]).into_iter().map(fill).collect();
        let line: Vec<String> = if p["command"] == "restorewatch" {
            args
        } else {
            // `sh -c "restorewatch ... | less -R"`: the restorewatch part of the pipeline.
            let script = args.last().expect("script");
            let cmd = script.split('|').next().unwrap_or("");
            let words: Vec<String> = cmd.split_whitespace().map(str::to_string).collect();
            assert_eq!(
                words.first().map(String::as_str),
                Some("restorewatch"),
                "{name}"
            );
            words[1..].to_vec()
        };
        assert!(
            cli_accepts(&line),
            "{name}: restorewatch {line:?} is refused"
        );
    }
    assert!(
        !cli_accepts(&["--no-such-flag".to_string()]),
        "the check can fail"
    );
}

#[test]
fn the_krew_manifest_template_renders_into_a_plugin_for_the_binary() {
    let text = std::fs::read_to_string(deploy("krew/restorewatch.yaml")).expect("krew");
    // What krew-release-bot does at a tag: the tag in, each archive's URL and checksum out.
    let rendered: String = text
        .lines()
        .map(|l| {
            let l = l.replace("{{ .TagName }}", "v0.1.0");
            match l.split_once("{{ addURIAndSha \"") {
                Some((indent, rest)) => {
                    let url = rest.split('"').next().unwrap_or("");
                    format!(
                        "{indent}uri: {url}\n{indent}sha256: {}\n",
                        "0123456789abcdef".repeat(4)
                    )
                }
                None => format!("{l}\n"),
            }
        })
        .collect();
    assert!(!rendered.contains("{{"), "{rendered}");
    let plugin: Value = serde_saphyr::from_str(&rendered).expect("the rendered manifest is YAML");
    assert_eq!(plugin["kind"], "Plugin");
    assert_eq!(plugin["metadata"]["name"], "restorewatch");
    assert_eq!(plugin["spec"]["version"], "v0.1.0");
    let platforms = plugin["spec"]["platforms"].as_array().expect("platforms");
    assert!(!platforms.is_empty());
    for p in platforms {
        assert_eq!(p["bin"], "restorewatch");
        assert!(
            p["files"]
                .as_array()
                .expect("files")
                .iter()
                .any(|f| f["from"] == "restorewatch")
        );
        let uri = p["uri"].as_str().expect("uri");
        assert!(
            uri.starts_with("https://") && uri.contains("v0.1.0"),
            "{uri}"
        );
        assert_eq!(p["sha256"].as_str().map(str::len), Some(64));
    }
}
