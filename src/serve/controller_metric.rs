//! The backup controller's generation as an info series: alerts and dashboards can tell whether
//! a finding's consequence is the guarded controller's (a failed RestoreJob) or the older one's
//! (a silent loss).

use crate::analysis::Report;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabels {
    generation: String,
    evidence: String,
}

/// Longest evidence text kept in the label.
const MAX_EVIDENCE: usize = 300;

pub(super) fn register(reg: &mut Registry, report: &Report) {
    let info = Family::<ControllerLabels, Gauge>::default();
    let g = &report.controller;
    let evidence: String = crate::text::one_line(&g.summary())
        .chars()
        .take(MAX_EVIDENCE)
        .collect();
    info.get_or_create(&ControllerLabels {
        generation: g.generation.as_str().to_string(),
        evidence,
    })
    .set(1);
    reg.register(
        "restorewatch_backup_controller_info",
        "The backup controller's generation as the cluster's objects and its Deployment's image \
         show it: guarded (refuses a taken -orig name), unguarded (skips it silently) or unknown; \
         with the evidence",
        info,
    );
}

#[cfg(test)]
mod tests {
    use crate::analysis::Report;
    use crate::analysis::controller::{ControllerGeneration, Evidence, Generation, judge};
    use crate::pipeline::frame::Frame;
    use crate::serve::metrics::{Exposition, encode_frame};
    use std::sync::Arc;

    fn scrape(controller: ControllerGeneration) -> String {
        let frame = Frame {
            seq: 1,
            snapshot: Arc::new(crate::cluster::Snapshot::default()),
            report: Arc::new(Report {
                controller: Arc::new(controller),
                ..Report::default()
            }),
            analyzed_at: jiff::Timestamp::UNIX_EPOCH,
        };
        let ex = Exposition {
            docs_base: "d",
            restores_per_namespace: 50,
        };
        encode_frame(Some(&frame), jiff::Timestamp::UNIX_EPOCH, &ex)
    }

    #[test]
    fn the_generation_and_its_evidence_are_one_info_series() {
        let text = scrape(judge(vec![Evidence::now(
            Generation::Guarded,
            "RestoreJob a/b failed naming -orig PVC x-orig-1a2b",
        )]));
        assert!(
            text.contains(r#"restorewatch_backup_controller_info{generation="guarded",evidence="guarded (evidence: RestoreJob a/b failed naming -orig PVC x-orig-1a2b)"} 1"#),
            "{text}"
        );
        let unknown = scrape(ControllerGeneration::default());
        assert!(
            unknown.contains(r#"restorewatch_backup_controller_info{generation="unknown",evidence="unknown (no evidence yet)"} 1"#),
            "{unknown}"
        );
    }
}
