//! Every object restorewatch ships or generates, held against the real CRDs' OpenAPI schemas
//! (`../shared/reference/crds`, beside the clone in CI): the bench generator's every shape,
//! every fixture and every scenario (its objects, its created manifests and its end state). A
//! real API server answers 422 to an object that breaks its schema (a DataDownload without
//! `spec.operationTimeout` was one), so such an object tests a cluster that cannot exist.

use clap::ValueEnum;
use restorewatch::bench::r#gen::{Shape, generate_shape};
use restorewatch::sim::schema::openapi_causes;
use restorewatch::sim::{Scenario, Store};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `openAPIV3Schema` by (apiVersion, kind).
type Schemas = BTreeMap<(String, String), Value>;

fn crd_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/crds")
}

fn schemas() -> Schemas {
    let dir = crd_dir();
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| {
        panic!(
            "the real CRDs are needed at {} ({e}): CI has shared/ beside the clone; put the reference there to run this test",
            dir.display()
        )
    });
    let mut out = Schemas::new();
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let text = std::fs::read_to_string(&path).expect("a CRD file");
        let crd: Value = serde_saphyr::from_str(&text)
            .unwrap_or_else(|e| panic!("{} does not parse: {e}", path.display()));
        let group = crd["spec"]["group"].as_str().expect("spec.group");
        let kind = crd["spec"]["names"]["kind"].as_str().expect("names.kind");
        for v in crd["spec"]["versions"].as_array().expect("versions") {
            let version = v["name"].as_str().expect("version name");
            out.insert(
                (format!("{group}/{version}"), kind.to_string()),
                v["schema"]["openAPIV3Schema"].clone(),
            );
        }
    }
    assert!(
        out.len() >= 10,
        "only {} CRD versions in {}",
        out.len(),
        dir.display()
    );
    out
}

/// The objects of one document: a List's items (typed lists name their items' kind), or the
/// object itself.
fn flatten(doc: Value, out: &mut Vec<Value>) {
    let kind = doc["kind"].as_str().unwrap_or_default().to_string();
    match doc.get("items").and_then(Value::as_array) {
        Some(items) if kind.ends_with("List") => {
            for item in items {
                let mut item = item.clone();
                if item.get("kind").is_none() && kind != "List" {
                    item["kind"] = Value::from(kind.trim_end_matches("List"));
                    item["apiVersion"] = doc["apiVersion"].clone();
                }
                out.push(item);
            }
        }
        _ => out.push(doc),
    }
}

/// What `checked` found wrong, one line per object and cause; counts the objects that have a
/// schema.
fn check(schemas: &Schemas, origin: &str, objects: &[Value], checked: &mut usize) -> Vec<String> {
    let mut bad = Vec::new();
    for o in objects {
        let key = (
            o["apiVersion"].as_str().unwrap_or_default().to_string(),
            o["kind"].as_str().unwrap_or_default().to_string(),
        );
        let Some(schema) = schemas.get(&key) else {
            continue;
        };
        *checked += 1;
        for (path, cause) in openapi_causes(schema, o) {
            bad.push(format!(
                "{origin}: {} {}/{}: {path}: {cause}",
                key.1,
                o["metadata"]["namespace"].as_str().unwrap_or_default(),
                o["metadata"]["name"].as_str().unwrap_or_default()
            ));
        }
    }
    bad
}

/// Fixtures that hold what a real server refuses on purpose: they test that the loader and the
/// analysis tolerate wrong types and missing fields (an old CRD version, a hand-edited dump).
const DELIBERATELY_INVALID: &[&str] = &[
    "robustness/wrong-types.yaml",
    "robustness/missing-fields.yaml",
];

fn fixture_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("fixtures directory") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "_generator") {
                fixture_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "json") {
            out.push(path);
        }
    }
}

/// A file's documents; the one deliberately malformed document of the robustness fixtures is
/// skipped, as `check` skips it.
fn documents(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("fixture text");
    if path.extension().is_some_and(|e| e == "json") {
        return vec![serde_json::from_str(&text).expect("fixture JSON")];
    }
    let mut docs = Vec::new();
    let mut current = String::new();
    let mut flush = |current: &mut String| {
        if !current.trim().is_empty() {
            match serde_saphyr::from_str::<Value>(current) {
                Ok(v) => docs.push(v),
                Err(e) => assert!(
                    path.ends_with("robustness/malformed-document.yaml"),
                    "{}: {e}",
                    path.display()
                ),
            }
        }
        current.clear();
    };
    for line in text.lines() {
        if line.trim_end() == "---" {
            flush(&mut current);
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    flush(&mut current);
    docs
}

#[test]
fn every_generated_fixture_and_scenario_object_meets_the_real_crds() {
    let schemas = schemas();
    let mut bad = Vec::new();
    let mut checked = 0;

    let now: jiff::Timestamp = "2026-11-20T10:00:00Z".parse().unwrap();
    for shape in Shape::value_variants() {
        let world = generate_shape(*shape, 2_000, now);
        let origin = format!("bench shape {}", shape.name());
        bad.extend(check(&schemas, &origin, &world.objects, &mut checked));
    }

    let mut files = Vec::new();
    fixture_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"),
        &mut files,
    );
    files.sort();
    assert!(files.len() > 100, "only {} fixtures", files.len());
    for path in &files {
        if DELIBERATELY_INVALID.iter().any(|f| path.ends_with(f)) {
            continue;
        }
        let mut objects = Vec::new();
        for doc in documents(path) {
            flatten(doc, &mut objects);
        }
        let origin = path
            .strip_prefix(env!("CARGO_MANIFEST_DIR"))
            .unwrap_or(path)
            .display()
            .to_string();
        bad.extend(check(&schemas, &origin, &objects, &mut checked));
    }

    for scenario in Scenario::builtin().expect("built-in scenarios parse") {
        let origin = format!("scenario {}", scenario.name);
        let created: Vec<Value> = scenario
            .steps
            .iter()
            .filter_map(|s| s.create.clone())
            .collect();
        bad.extend(check(&schemas, &origin, &scenario.objects, &mut checked));
        bad.extend(check(
            &schemas,
            &format!("{origin} (created by a step)"),
            &created,
            &mut checked,
        ));
        // The end state: what the status and patch steps made of them.
        let store = Store::new(64, 1);
        let errors = scenario.apply_all(&store);
        assert!(errors.is_empty(), "{origin}: {errors:?}");
        let end: Vec<Value> = restorewatch::model::KINDS
            .iter()
            .flat_map(|k| store.all(k.kind, &Default::default()))
            .collect();
        bad.extend(check(
            &schemas,
            &format!("{origin} (end state)"),
            &end,
            &mut checked,
        ));
    }
    assert!(checked > 1_000, "only {checked} objects had a schema");
    assert!(
        bad.is_empty(),
        "{} objects break the real CRDs:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
