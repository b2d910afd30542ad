//! The `check -o json` document (schema in docs/findings.md): every restore with its steps and
//! history, every finding. One builder for `check` and `serve`'s `/report`, so the two can
//! never disagree.

use crate::analysis::{Finding, Report};
use serde::Serialize;

#[derive(Serialize)]
struct JsonReport<'a> {
    restores: Vec<JsonRestore<'a>>,
    findings: Vec<&'a Finding>,
    /// The backup controller's generation and the evidence for it.
    controller: &'a crate::analysis::controller::ControllerGeneration,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonRestore<'a> {
    namespace: &'a str,
    name: &'a str,
    uid: &'a str,
    driver: &'a str,
    target: Option<&'a crate::analysis::TargetRef>,
    in_place: bool,
    phase: &'a str,
    /// The one verdict (`document::verdict`), the same the report and the dashboard show.
    verdict: super::verdict::Verdict,
    steps: &'a [crate::analysis::Step],
    history: &'a [crate::analysis::HistoryEntry],
}

pub fn json(report: &Report) -> String {
    let doc = JsonReport {
        restores: report
            .restores
            .iter()
            .map(|r| JsonRestore {
                namespace: &r.id.namespace,
                name: &r.id.name,
                uid: &r.uid,
                driver: r.driver.as_str(),
                target: r.target.as_ref(),
                in_place: r.in_place,
                phase: &r.phase,
                verdict: super::verdict::of(r, report.findings_for(&r.id)),
                steps: &r.steps,
                history: &r.history,
            })
            .collect(),
        findings: report.findings.iter().map(|f| &**f).collect(),
        controller: &report.controller,
    };
    serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}
