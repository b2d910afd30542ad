//! Every dump the REAL Cozystack backup controller left on a real API server
//! (`../shared/reference/dumps/real-controller/`, kept out of the project: CI has `shared/`
//! beside the clone) analysed at its own moment (the newest managedFields or Event time in the
//! file), against `tests/real_controller_expectations.toml`: the scenario's restore, its
//! steps, the findings about its namespace, the repairs they offer and the controller's
//! generation, as the dumps README and the controller's code say they should be.

use restorewatch::analysis::{Finding, Report, Settings, analyze};
use restorewatch::cli::check::load_snapshot;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
struct Expectations {
    dump: Vec<Dump>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Dump {
    file: String,
    /// Overrides the file's own moment (said why in the file).
    now: Option<String>,
    /// The scenario's namespace: findings about it are the ones compared.
    namespace: String,
    /// `namespace/name` of the scenario's restore; none before it exists.
    restore: Option<String>,
    phase: Option<String>,
    generation: String,
    /// A substring of some evidence for the generation.
    evidence: Option<String>,
    /// Codes that must be reported about the namespace.
    #[serde(default)]
    must: Vec<String>,
    /// Codes that may be reported; any code neither here nor in `must` must not be.
    #[serde(default)]
    may: Vec<String>,
    /// Codes that must not be reported (stated for emphasis, beside the exact set).
    #[serde(default)]
    must_not: Vec<String>,
    /// Exactly the repair actions the namespace's findings offer.
    #[serde(default)]
    actions: Vec<String>,
    #[serde(default)]
    steps: BTreeMap<String, String>,
}

/// `shared/` beside the clone (CI), or beside a parent (a worktree under the clone's parent).
fn dumps_dir() -> PathBuf {
    let start = Path::new(env!("CARGO_MANIFEST_DIR"));
    start
        .ancestors()
        .skip(1)
        .map(|a| a.join("shared/reference/dumps/real-controller"))
        .find(|d| d.join("README.md").is_file())
        .unwrap_or_else(|| {
            panic!(
                "the real controller's dumps are needed at ../shared/reference/dumps/real-controller (looked beside {} and its parents): CI has shared/ beside the clone; put the reference there to run this test",
                start.display()
            )
        })
}

/// The moment of a dump: its newest managedFields or Event time.
fn moment(path: &Path) -> jiff::Timestamp {
    let text = std::fs::read_to_string(path).expect("dump readable");
    let v: serde_json::Value = serde_json::from_str(&text).expect("dump is JSON");
    let mut newest: Option<jiff::Timestamp> = None;
    let mut see = |t: Option<&str>| {
        if let Some(t) = t.and_then(|t| t.parse::<jiff::Timestamp>().ok()) {
            newest = Some(newest.map_or(t, |n| n.max(t)));
        }
    };
    for item in v["items"].as_array().into_iter().flatten() {
        for m in item["metadata"]["managedFields"]
            .as_array()
            .into_iter()
            .flatten()
        {
            see(m["time"].as_str());
        }
        if item["kind"] == "Event" {
            for k in ["lastTimestamp", "eventTime", "firstTimestamp"] {
                see(item[k].as_str());
            }
        }
    }
    newest.expect("a dump with a time")
}

fn about(f: &Finding, ns: &str) -> bool {
    match &f.restore {
        Some(r) => r.namespace == ns,
        None => f.objects.iter().any(|o| o.namespace == ns),
    }
}

/// Compares one dump's report with its expectations: `(what, failure)` per miss.
fn compare(d: &Dump, report: &Report) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mine: Vec<&Finding> = report
        .findings
        .iter()
        .map(|f| &**f)
        .filter(|f| about(f, &d.namespace))
        .collect();
    let codes: BTreeSet<&str> = mine.iter().map(|f| f.code.as_str()).collect();
    for m in &d.must {
        if !codes.contains(m.as_str()) {
            out.push((m.clone(), format!("missing {m}; reported {codes:?}")));
        }
    }
    for c in &codes {
        let expected = d.must.iter().chain(&d.may).any(|m| m == c);
        if !expected || d.must_not.iter().any(|m| m == c) {
            let msg = mine
                .iter()
                .find(|f| f.code.as_str() == *c)
                .map(|f| f.message.clone())
                .unwrap_or_default();
            out.push((c.to_string(), format!("must not report {c}: {msg}")));
        }
    }
    let actions: BTreeSet<String> = mine
        .iter()
        .filter_map(|f| f.action)
        .map(|a| a.as_str().to_string())
        .collect();
    let want: BTreeSet<String> = d.actions.iter().cloned().collect();
    if actions != want {
        out.push((
            "actions".into(),
            format!("offers {actions:?}, expected {want:?}"),
        ));
    }
    let g = &report.controller;
    if g.generation.as_str() != d.generation {
        out.push((
            "generation".into(),
            format!("generation {}, expected {}", g.summary(), d.generation),
        ));
    }
    if let Some(e) = &d.evidence
        && !g.evidence.iter().any(|x| x.what.contains(e.as_str()))
    {
        out.push((
            "evidence".into(),
            format!("no evidence mentions {e:?}: {}", g.summary()),
        ));
    }
    let restore = d
        .restore
        .as_ref()
        .and_then(|id| report.restores.iter().find(|r| &r.id.to_string() == id));
    match (&d.restore, restore) {
        (Some(id), None) => out.push(("restore".into(), format!("no restore {id}"))),
        (None, _) => {
            if let Some(r) = report
                .restores
                .iter()
                .find(|r| r.id.namespace == d.namespace)
            {
                out.push(("restore".into(), format!("unexpected restore {}", r.id)));
            }
        }
        (Some(_), Some(r)) => {
            if let Some(p) = &d.phase
                && &r.phase != p
            {
                out.push(("phase".into(), format!("phase {}, expected {p}", r.phase)));
            }
            for (id, want) in &d.steps {
                match r.steps.iter().find(|s| s.id.as_str() == id) {
                    None => out.push((format!("step:{id}"), format!("no step {id}"))),
                    Some(s) if s.state.as_str() != want => out.push((
                        format!("step:{id}"),
                        format!(
                            "step {id} is {} ({}), expected {want}",
                            s.state.as_str(),
                            s.detail
                        ),
                    )),
                    _ => {}
                }
            }
        }
    }
    // Texts of the real runs: no empty reason printed (`PartiallyFailed: ;`).
    for f in report.findings.iter() {
        if f.message.contains(": ;") || f.message.ends_with(": ") {
            out.push((
                "text".into(),
                format!("{} prints an empty reason: {}", f.code, f.message),
            ));
        }
    }
    out
}

#[test]
fn every_real_controller_dump_is_judged_as_its_readme_says() {
    let dir = dumps_dir();
    let exp_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/real_controller_expectations.toml");
    let text = std::fs::read_to_string(&exp_path).expect("expectations readable");
    let exp: Expectations = toml::from_str(&text).expect("expectations parse");

    // Every dump has its expectations, and every expectation its dump.
    let files: BTreeSet<String> = std::fs::read_dir(&dir)
        .expect("dumps dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    let named: BTreeSet<String> = exp.dump.iter().map(|d| d.file.clone()).collect();
    assert_eq!(
        files, named,
        "the dumps and real_controller_expectations.toml name the same files"
    );

    let mut failures = Vec::new();
    for d in &exp.dump {
        let path = dir.join(&d.file);
        let (snap, problems) = load_snapshot(std::slice::from_ref(&path)).expect("the dump loads");
        assert!(problems.is_empty(), "{}: {problems:?}", d.file);
        let now = match &d.now {
            Some(t) => t.parse().expect("now is RFC3339"),
            None => moment(&path),
        };
        let report = analyze(&snap, &Settings::default(), now);
        for (_what, why) in compare(d, &report) {
            failures.push(format!("{} (at {now}): {why}", d.file));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} dumps judged otherwise than expected:\n{}",
        failures.len(),
        exp.dump.len(),
        failures.join("\n")
    );
}
