//! Table test over `tests/fixtures/expectations.toml`: each kubectl-style dump must produce the
//! findings it names, must not produce its near misses, and must put the named restore's steps
//! in the states an operator would expect.

use restorewatch::analysis::{Settings, Severity, analyze};
use restorewatch::args::parse_duration;
use restorewatch::cli::check::load_snapshot;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Deserialize)]
struct Expectations {
    case: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    file: String,
    now: String,
    stall_after: Option<String>,
    #[serde(default)]
    must: Vec<String>,
    #[serde(default)]
    must_not: Vec<String>,
    max_severity: Option<String>,
    steps: Option<BTreeMap<String, String>>,
    #[serde(default)]
    finding_objects: Vec<FindingObjects>,
    /// Some finding of the code says this / offers this / is attributed so.
    #[serde(default)]
    finding_has: Vec<FindingHas>,
    /// Substrings the named restore's step details must contain.
    step_details: Option<BTreeMap<String, String>>,
    /// Who made each named `-orig` PVC, as the `-orig` screen shows it.
    #[serde(default)]
    orig_pvcs: Vec<OrigPvc>,
    /// Load problems the file must report (deliberately broken documents).
    #[serde(default)]
    load_problems: Option<usize>,
    /// The one verdict (`document::verdict`) on the restore `verdict_of` (`namespace/name`).
    verdict: Option<String>,
    verdict_of: Option<String>,
}

#[derive(Deserialize)]
struct FindingHas {
    code: String,
    /// A substring of the message or the remedy.
    text: Option<String>,
    /// The offered action (`none` for none).
    action: Option<String>,
    /// The restore it is attributed to (`""` for none).
    restore: Option<String>,
}

#[derive(Deserialize)]
struct OrigPvc {
    /// `namespace/name`.
    name: String,
    /// `namespace/restore`, `deleted` or `unknown`.
    made_by: String,
}

#[derive(Deserialize)]
struct FindingObjects {
    code: String,
    objects: Vec<String>,
}

fn sev_rank(s: &str) -> Option<Option<Severity>> {
    match s {
        "none" => Some(None),
        "info" => Some(Some(Severity::Info)),
        "warning" => Some(Some(Severity::Warning)),
        "error" => Some(Some(Severity::Error)),
        _ => None,
    }
}

#[test]
fn every_fixture_meets_its_expectations() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let text = std::fs::read_to_string(dir.join("expectations.toml"))
        .expect("expectations.toml is readable");
    let exp: Expectations = toml::from_str(&text).expect("expectations.toml parses");
    assert!(
        exp.case.len() >= 40,
        "only {} cases: every finding needs a hit and a near miss",
        exp.case.len()
    );
    let mut failures = Vec::new();
    let mut covered = std::collections::BTreeSet::new();
    for case in &exp.case {
        let path = dir.join(&case.file);
        let (snap, problems) = match load_snapshot(std::slice::from_ref(&path)) {
            Ok(x) => x,
            Err(e) => {
                failures.push(format!("{}: cannot load: {e}", case.file));
                continue;
            }
        };
        if let Some(n) = case.load_problems {
            if problems.len() != n {
                failures.push(format!(
                    "{}: {} load problems, expected {n}: {problems:?}",
                    case.file,
                    problems.len()
                ));
            }
        } else if !problems.is_empty() {
            failures.push(format!(
                "{}: unexpected load problems {problems:?}",
                case.file
            ));
        }
        let now = case.now.parse().expect("case.now is RFC3339");
        let mut settings = Settings::default();
        if let Some(s) = &case.stall_after {
            settings.stall_after = parse_duration(s).expect("stall_after parses");
        }
        let report = analyze(&snap, &settings, now);
        let codes: Vec<&str> = report.findings.iter().map(|f| f.code.as_str()).collect();
        for m in &case.must {
            covered.insert(m.clone());
            if !codes.contains(&m.as_str()) {
                failures.push(format!("{}: missing {m}; got {codes:?}", case.file));
            }
        }
        for m in &case.must_not {
            if codes.contains(&m.as_str()) {
                let f = report
                    .findings
                    .iter()
                    .find(|f| f.code.as_str() == m)
                    .map(|f| f.message.clone());
                failures.push(format!("{}: must not report {m}: {f:?}", case.file));
            }
        }
        if let Some(max) = &case.max_severity {
            let limit = sev_rank(max).expect("max_severity is none|info|warning|error");
            for f in report.findings.iter() {
                if limit.is_none_or(|l| f.severity > l) {
                    failures.push(format!(
                        "{}: {} {} above max {max}: {}",
                        case.file,
                        f.severity.as_str(),
                        f.code,
                        f.message
                    ));
                }
            }
        }
        if let Some(steps) = &case.steps {
            let Some(restore) = steps.get("restore") else {
                failures.push(format!("{}: steps without restore", case.file));
                continue;
            };
            match report
                .restores
                .iter()
                .find(|r| &r.id.to_string() == restore)
            {
                None => failures.push(format!("{}: no restore {restore}", case.file)),
                Some(r) => {
                    for (id, want) in steps.iter().filter(|(k, _)| k.as_str() != "restore") {
                        match r.steps.iter().find(|s| s.id.as_str() == id) {
                            None => {
                                failures.push(format!("{}: {restore} has no step {id}", case.file))
                            }
                            Some(s) if s.state.as_str() != want => failures.push(format!(
                                "{}: {restore} step {id} is {} ({}), expected {want}",
                                case.file,
                                s.state.as_str(),
                                s.detail
                            )),
                            _ => {}
                        }
                    }
                }
            }
        }
        if let (Some(want), Some(of)) = (&case.verdict, &case.verdict_of) {
            match report.restores.iter().find(|r| &r.id.to_string() == of) {
                None => failures.push(format!("{}: no restore {of} for the verdict", case.file)),
                Some(r) => {
                    let got = restorewatch::document::verdict::of(r, report.findings_for(&r.id));
                    if got.as_str() != want {
                        failures.push(format!(
                            "{}: {of} verdict is {}, expected {want}",
                            case.file,
                            got.as_str()
                        ));
                    }
                }
            }
        }
        // Never "waiting to be rendered" beside a finding that names that very Cluster.
        for r in report.restores.iter() {
            let Some(pg) = &r.postgres else { continue };
            let waiting = r.steps.iter().any(|s| {
                s.detail.contains(&format!(
                    "waiting for Cluster {} to be rendered",
                    pg.cluster_name
                ))
            });
            let named = format!("Cluster/{}/{}", r.id.namespace, pg.cluster_name);
            if let Some(f) = report
                .findings
                .iter()
                .find(|f| waiting && f.objects.iter().any(|o| o.to_string() == named))
            {
                failures.push(format!(
                    "{}: {} waits for {named} to be rendered, yet {} names it",
                    case.file, r.id, f.code
                ));
            }
        }
        for fh in &case.finding_has {
            let fits = |f: &&restorewatch::analysis::Finding| {
                f.code.as_str() == fh.code
                    && fh
                        .text
                        .as_ref()
                        .is_none_or(|t| f.message.contains(t) || f.remedy.contains(t))
                    && fh
                        .action
                        .as_ref()
                        .is_none_or(|a| f.action.map_or("none", |x| x.as_str()) == a.as_str())
                    && fh.restore.as_ref().is_none_or(|r| {
                        f.restore
                            .as_ref()
                            .map(|x| x.to_string())
                            .unwrap_or_default()
                            == *r
                    })
            };
            if !report.findings.iter().any(|f| fits(&&**f)) {
                let got: Vec<String> = report
                    .findings
                    .iter()
                    .filter(|f| f.code.as_str() == fh.code)
                    .map(|f| {
                        format!(
                            "[restore {:?}, action {:?}] {} / {}",
                            f.restore.as_ref().map(|r| r.to_string()),
                            f.action.map(|a| a.as_str()),
                            f.message,
                            f.remedy
                        )
                    })
                    .collect();
                failures.push(format!(
                    "{}: no {} with text {:?}, action {:?}, restore {:?}; got {got:?}",
                    case.file, fh.code, fh.text, fh.action, fh.restore
                ));
            }
        }
        for o in &case.orig_pvcs {
            let view = report
                .orig_pvcs
                .iter()
                .find(|v| format!("{}/{}", v.namespace, v.pvc.name) == o.name);
            let made_by = view.map(|v| match (&v.restore, &v.deleted_restore) {
                (Some(r), _) => r.to_string(),
                (None, Some(_)) => "deleted".to_string(),
                (None, None) => "unknown".to_string(),
            });
            if made_by.as_deref() != Some(o.made_by.as_str()) {
                failures.push(format!(
                    "{}: -orig PVC {} made by {made_by:?}, expected {}",
                    case.file, o.name, o.made_by
                ));
            }
        }
        if let Some(details) = &case.step_details {
            let restore = case
                .steps
                .as_ref()
                .and_then(|s| s.get("restore"))
                .expect("step_details need [case.steps] restore");
            if let Some(r) = report
                .restores
                .iter()
                .find(|r| &r.id.to_string() == restore)
            {
                for (id, want) in details {
                    let got = r.steps.iter().find(|s| s.id.as_str() == id);
                    if !got.is_some_and(|s| s.detail.contains(want.as_str())) {
                        failures.push(format!(
                            "{}: {restore} step {id} detail {:?} does not contain {want:?}",
                            case.file,
                            got.map(|s| &s.detail)
                        ));
                    }
                }
            }
        }
        for fo in &case.finding_objects {
            let named: Vec<String> = report
                .findings
                .iter()
                .filter(|f| f.code.as_str() == fo.code)
                .flat_map(|f| f.objects.iter().map(|o| o.to_string()))
                .collect();
            for o in &fo.objects {
                if !named.contains(o) {
                    failures.push(format!(
                        "{}: {} does not name {o}; names {named:?}",
                        case.file, fo.code
                    ));
                }
            }
        }
    }
    for code in restorewatch::analysis::Code::ALL {
        if code.as_str() != "watch-stale" && !covered.contains(code.as_str()) {
            failures.push(format!("no fixture must produce {code}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
