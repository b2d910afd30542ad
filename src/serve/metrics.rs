//! The Prometheus exposition of one analysed frame. Pure: a frame and a clock in, text out, so
//! that what a scrape shows is exactly the report of that moment and nothing lingers: a finding
//! that went away has no series in the next scrape. (`encode_frame` adds the process's own
//! cost, read at the call; `encode_with` is the pure part.)

mod cap;
mod lifecycle;
mod process;
pub mod text_format;

pub use cap::DEFAULT_RESTORES_PER_NAMESPACE;
pub use process::Cost;

use crate::analysis::{Finding, Report, StepState};
use crate::cluster::{Snapshot, SyncState};
use crate::model::{KINDS, KindInfo, quantity};
use crate::pipeline::frame::Frame;
use jiff::Timestamp;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;

/// The content type `encode` writes (`text_format` has the other).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Longest label value kept: names are at most 253 characters, messages are cut here so that
/// one odd object cannot blow up the series size.
const MAX_LABEL: usize = 300;

pub(super) type FloatGauge = Gauge<f64, AtomicU64>;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FindingLabels {
    code: String,
    severity: String,
    namespace: String,
    restore: String,
    object: String,
    stale: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FindingInfoLabels {
    code: String,
    namespace: String,
    restore: String,
    object: String,
    message: String,
    remedy: String,
    action: String,
    docs: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RestoreInfoLabels {
    namespace: String,
    restore: String,
    driver: String,
    phase: String,
    step: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StepLabels {
    namespace: String,
    restore: String,
    step: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NamespaceLabels {
    namespace: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WatchLabels {
    resource: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
struct OrigLabels {
    namespace: String,
    reclaimable: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BuildLabels {
    version: String,
}

/// What the exposition needs besides the frame.
#[derive(Debug, Clone)]
pub struct Exposition<'a> {
    /// Where `docs/findings.md` is published; each finding links to `<base>#<code>`.
    pub docs_base: &'a str,
    /// Restores of one namespace that get series of their own (see `cap`).
    pub restores_per_namespace: usize,
}

/// The number a step's state is exported as (documented in the README).
pub fn step_value(s: StepState) -> i64 {
    match s {
        StepState::Pending => 0,
        StepState::Active => 1,
        StepState::Done => 2,
        StepState::Skipped => 3,
        StepState::Failed => 4,
    }
}

/// A label value safe to export: control characters shown escaped as everywhere else
/// (`crate::text`), bounded length.
fn label(s: &str) -> String {
    let mut out = crate::text::one_line(s).into_owned();
    if out.len() > MAX_LABEL {
        let mut cut = MAX_LABEL;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push('…');
    }
    out
}

/// `<resource>[.<group>]`, as kubectl names a resource (`KindInfo::resource_name`).
pub fn resource_name(info: &KindInfo) -> String {
    info.resource_name()
}

fn finding_namespace(f: &Finding) -> String {
    f.restore
        .as_ref()
        .map(|r| r.namespace.clone())
        .or_else(|| f.objects.first().map(|o| o.namespace.to_string()))
        .unwrap_or_default()
}

fn finding_object(f: &Finding) -> String {
    f.objects
        .first()
        .map(|o| format!("{}/{}/{}", o.kind.info().api_kind, o.namespace, o.name))
        .unwrap_or_default()
}

fn restore_label(f: &Finding) -> String {
    f.restore
        .as_ref()
        .map(|r| r.name.clone())
        .unwrap_or_default()
}

fn register_findings(reg: &mut Registry, report: &Report, kept: &cap::Kept, ex: &Exposition) {
    let findings = Family::<FindingLabels, Gauge>::default();
    let info = Family::<FindingInfoLabels, Gauge>::default();
    // A restore left out by the cap takes its findings along: they are its series too, and
    // those with findings are the last to be left out.
    let exported = report
        .findings
        .iter()
        .filter(|f| f.restore.as_ref().is_none_or(|id| kept.has(id)));
    for f in exported {
        let (namespace, restore, object) = (
            label(&finding_namespace(f)),
            label(&restore_label(f)),
            label(&finding_object(f)),
        );
        findings
            .get_or_create(&FindingLabels {
                code: f.code.as_str().to_string(),
                severity: f.severity.as_str().to_string(),
                namespace: namespace.clone(),
                restore: restore.clone(),
                object: object.clone(),
                stale: f.stale.to_string(),
            })
            .inc();
        info.get_or_create(&FindingInfoLabels {
            code: f.code.as_str().to_string(),
            namespace,
            restore,
            object,
            message: label(&f.message),
            remedy: label(&f.remedy),
            action: f.action.map(|a| a.as_str()).unwrap_or("").to_string(),
            docs: format!("{}#{}", ex.docs_base, f.code.as_str()),
        })
        .set(1);
    }
    reg.register(
        "restorewatch_findings",
        "Active findings (1 each) by code, severity, restore and first object; stale=true when \
         built on a kind whose watch is not healthy",
        findings,
    );
    reg.register(
        "restorewatch_finding_info",
        "The message, remedy, offered action and documentation link of each active finding \
         (join on code, namespace, restore, object)",
        info,
    );
}

fn register_restores(reg: &mut Registry, report: &Report, kept: &cap::Kept) {
    let info = Family::<RestoreInfoLabels, Gauge>::default();
    let steps = Family::<StepLabels, Gauge>::default();
    let dropped = Family::<NamespaceLabels, Gauge>::default();
    for (ns, n) in &kept.dropped {
        dropped
            .get_or_create(&NamespaceLabels {
                namespace: label(ns),
            })
            .set(i64::try_from(*n).unwrap_or(i64::MAX));
    }
    for r in report.restores.iter().filter(|r| kept.has(&r.id)) {
        let (namespace, restore) = (label(&r.id.namespace), label(&r.id.name));
        info.get_or_create(&RestoreInfoLabels {
            namespace: namespace.clone(),
            restore: restore.clone(),
            driver: r.driver.as_str().to_string(),
            phase: label(&r.phase),
            step: r
                .current_step()
                .map(|s| s.id.as_str())
                .unwrap_or("")
                .to_string(),
        })
        .set(1);
        for s in &r.steps {
            steps
                .get_or_create(&StepLabels {
                    namespace: namespace.clone(),
                    restore: restore.clone(),
                    step: s.id.as_str().to_string(),
                })
                .set(step_value(s.state));
        }
    }
    reg.register(
        "restorewatch_restore_info",
        "One series per RestoreJob: its driver, phase and the step to look at",
        info,
    );
    reg.register(
        "restorewatch_restore_step",
        "State of each step of each restore: 0 pending, 1 active, 2 done, 3 skipped, 4 failed",
        steps,
    );
    reg.register(
        "restorewatch_restores_not_exported",
        "RestoreJobs of a namespace left without series of their own (restore, step, duration, \
         transfer, Velero phase, findings) because the namespace has more than serve \
         --restores-per-namespace; those with findings, then running, then newest are kept",
        dropped,
    );
}

fn register_watches(reg: &mut Registry, snapshot: &Snapshot, now: Timestamp) {
    let up = Family::<WatchLabels, Gauge>::default();
    let age = Family::<WatchLabels, FloatGauge>::default();
    for info in KINDS.iter() {
        let Some(h) = snapshot.health.get(&info.kind) else {
            continue;
        };
        // A kind whose API is not installed has no watch to be down: exporting 0 would page
        // every cluster without CDI.
        if h.state == SyncState::NotInstalled {
            continue;
        }
        let labels = WatchLabels {
            resource: resource_name(info),
        };
        let healthy = matches!(h.state, SyncState::Synced | SyncState::FromFile);
        up.get_or_create(&labels).set(i64::from(healthy));
        if let Some(t) = h.last_event {
            let secs = now.duration_since(t).as_secs_f64().max(0.0);
            age.get_or_create(&labels).set(secs);
        }
    }
    reg.register(
        "restorewatch_watch_up",
        "1 while the watch of a resource is synced, 0 while it resyncs, fails or is forbidden",
        up,
    );
    reg.register(
        "restorewatch_watch_last_event_age_seconds",
        "Seconds since the watch of a resource last delivered a change",
        age,
    );
}

fn register_orig(reg: &mut Registry, report: &Report) {
    let mut by: BTreeMap<OrigLabels, (i64, f64)> = BTreeMap::new();
    for o in report.orig_pvcs.iter() {
        let key = OrigLabels {
            namespace: label(&o.namespace),
            reclaimable: o.reclaim.is_ok().to_string(),
        };
        let e = by.entry(key).or_default();
        e.0 += 1;
        e.1 += o.size.as_deref().and_then(quantity::bytes).unwrap_or(0) as f64;
    }
    let count = Family::<OrigLabels, Gauge>::default();
    let bytes = Family::<OrigLabels, FloatGauge>::default();
    for (k, (n, b)) in by {
        count.get_or_create(&k).set(n);
        bytes.get_or_create(&k).set(b);
    }
    reg.register(
        "restorewatch_orig_pvcs",
        "-orig PVCs kept by VM restores, by namespace and whether they can be reclaimed now",
        count,
    );
    reg.register(
        "restorewatch_orig_bytes",
        "Requested storage of the -orig PVCs, by namespace and whether they can be reclaimed now",
        bytes,
    );
}

fn register_build(reg: &mut Registry) {
    let build = Family::<BuildLabels, Gauge>::default();
    build
        .get_or_create(&BuildLabels {
            version: env!("CARGO_PKG_VERSION").to_string(),
        })
        .set(1);
    reg.register("restorewatch_build_info", "The running restorewatch", build);
}

/// The whole exposition of now, with the process's cost as it is at the call.
pub fn encode_frame(frame: Option<&Frame>, now: Timestamp, ex: &Exposition) -> String {
    encode_with(frame, now, ex, Cost::now())
}

/// The whole exposition: build info, readiness and the process's cost always; the rest once a
/// frame exists.
pub fn encode_with(frame: Option<&Frame>, now: Timestamp, ex: &Exposition, cost: Cost) -> String {
    let mut reg = Registry::default();
    register_build(&mut reg);
    process::register(&mut reg, cost);
    let ready = Gauge::<i64>::default();
    ready.set(i64::from(super::readiness::Readiness::of(frame).is_ready()));
    reg.register(
        "restorewatch_ready",
        "1 while every watched resource has been listed completely and every watch is up (an \
         API that is not installed counts as listed, a 403 does not); see /readyz for why not",
        ready,
    );
    if let Some(frame) = frame {
        let kept = cap::choose(&frame.report, ex.restores_per_namespace);
        register_findings(&mut reg, &frame.report, &kept, ex);
        register_restores(&mut reg, &frame.report, &kept);
        register_watches(&mut reg, &frame.snapshot, now);
        register_orig(&mut reg, &frame.report);
        super::controller_metric::register(&mut reg, &frame.report);
        lifecycle::register(&mut reg, &frame.report, &kept, &frame.snapshot, now);
    }
    let mut out = String::new();
    // Writing into a String cannot fail; an encoder error would only mean a bug in a label.
    if let Err(e) = encode(&mut out, &reg) {
        tracing::error!("metrics encoding failed: {e}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{Code, Finding, ObjRef, RestoreId, Severity};
    use crate::cluster::KindHealth;
    use crate::model::Kind;
    use std::sync::Arc;

    fn finding(code: Code, message: &str) -> Finding {
        Finding {
            code,
            severity: Severity::Error,
            restore: Some(RestoreId {
                namespace: "tenant-a".into(),
                name: "restore-test".into(),
            }),
            objects: vec![ObjRef::new(
                Kind::PersistentVolumeClaim,
                "tenant-a",
                "vm-disk-data-orig-de3e",
            )],
            message: message.into(),
            remedy: "Run resume-rename".into(),
            action: None,
            stale: false,
        }
    }

    fn frame(findings: Vec<Finding>, health: &[(Kind, SyncState)]) -> Frame {
        let mut snapshot = Snapshot::default();
        for (k, st) in health {
            snapshot.health.insert(
                *k,
                KindHealth {
                    state: st.clone(),
                    last_event: None,
                },
            );
        }
        Frame {
            seq: 1,
            snapshot: Arc::new(snapshot),
            report: Arc::new(Report {
                findings: Arc::new(findings.into_iter().map(Arc::new).collect()),
                ..Report::default()
            }),
            analyzed_at: Timestamp::now(),
        }
    }

    const EX: Exposition = Exposition {
        docs_base: "https://docs.example/findings.md",
        restores_per_namespace: DEFAULT_RESTORES_PER_NAMESPACE,
    };

    #[test]
    fn a_finding_that_goes_away_leaves_no_series() {
        let with = frame(vec![finding(Code::RenameHalfDone, "half done")], &[]);
        let text = encode_frame(Some(&with), Timestamp::now(), &EX);
        assert!(text.contains(
            "restorewatch_findings{code=\"rename-half-done\",severity=\"error\",namespace=\"tenant-a\",restore=\"restore-test\",object=\"PersistentVolumeClaim/tenant-a/vm-disk-data-orig-de3e\",stale=\"false\"} 1"
        ), "{text}");
        assert!(text.contains("docs=\"https://docs.example/findings.md#rename-half-done\""));
        let without = frame(vec![], &[]);
        let text = encode_frame(Some(&without), Timestamp::now(), &EX);
        assert!(!text.contains("rename-half-done"), "{text}");
    }

    #[test]
    fn label_values_carry_no_control_characters_and_are_bounded() {
        let hostile = format!(
            "\x1b]0;pwned\x07evil\r\n\"quoted\" \u{202E}rtl {}",
            "x".repeat(5000)
        );
        let text = encode_frame(
            Some(&frame(vec![finding(Code::RenameHalfDone, &hostile)], &[])),
            Timestamp::now(),
            &EX,
        );
        let line = text
            .lines()
            .find(|l| l.starts_with("restorewatch_finding_info"))
            .expect("info line");
        assert!(
            !line
                .chars()
                .any(|c| c.is_control() || crate::text::is_bidi_control(c)),
            "{line:?}"
        );
        assert!(
            line.contains("\\\"quoted\\\""),
            "quotes are escaped: {line}"
        );
        assert!(line.len() < 1500, "bounded: {} bytes", line.len());
    }

    #[test]
    fn watches_report_up_down_and_skip_uninstalled_apis() {
        let f = frame(
            vec![],
            &[
                (Kind::PersistentVolumeClaim, SyncState::Synced),
                (
                    Kind::RestoreJob,
                    SyncState::Failed {
                        since: Timestamp::now(),
                        error: "500".into(),
                    },
                ),
                (Kind::DataVolume, SyncState::NotInstalled),
            ],
        );
        let text = encode_frame(Some(&f), Timestamp::now(), &EX);
        assert!(text.contains("restorewatch_watch_up{resource=\"persistentvolumeclaims\"} 1"));
        assert!(
            text.contains("restorewatch_watch_up{resource=\"restorejobs.backups.cozystack.io\"} 0")
        );
        assert!(!text.contains("datavolumes"), "{text}");
    }

    #[test]
    fn before_the_first_sync_only_readiness_and_build() {
        let text = encode_frame(None, Timestamp::now(), &EX);
        assert!(text.contains("restorewatch_ready 0"));
        assert!(text.contains("restorewatch_build_info{version="));
        assert!(!text.contains("restorewatch_findings{"));
    }
}
