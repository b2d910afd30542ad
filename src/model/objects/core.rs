use super::super::field::Field;
use super::super::history::shared as pooled;
use super::super::json::{
    array_at, at, i64_at, opt_shared, opt_str, shared_at, str_at, str_list, time_at,
};
use super::super::secret_text::redact_message;
use crate::model::shared_str::SharedStr;
use jiff::Timestamp;
use serde_json::Value;
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Namespace {}

impl Namespace {
    pub fn parse(_v: &Value) -> Self {
        Namespace {}
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pvc {
    // Every value but the volume's name is one of a few a cluster repeats on thousands of
    // PVCs: shared (`history::shared`), not an allocation each.
    /// `Pending`, `Bound`, `Lost`.
    pub phase: Field<Arc<str>>,
    pub volume_name: Option<String>,
    pub storage_class: Option<Arc<str>>,
    pub access_modes: Box<[Arc<str>]>,
    pub volume_mode: Option<Arc<str>>,
    /// `spec.resources.requests.storage`, as the quantity string.
    pub request: Option<Arc<str>>,
    /// `status.capacity.storage`.
    pub capacity: Option<Arc<str>>,
}

impl Pvc {
    pub fn parse(v: &Value) -> Self {
        Pvc {
            phase: shared_at(v, &["status", "phase"]),
            volume_name: opt_str(v, &["spec", "volumeName"]).filter(|s| !s.is_empty()),
            storage_class: opt_shared(v, &["spec", "storageClassName"]),
            access_modes: str_list(v, &["spec", "accessModes"])
                .iter()
                .map(|m| pooled(m))
                .collect(),
            volume_mode: opt_shared(v, &["spec", "volumeMode"]),
            request: quantity(v, &["spec", "resources", "requests", "storage"]),
            capacity: quantity(v, &["status", "capacity", "storage"]),
        }
    }

    pub fn size(&self) -> Option<&str> {
        self.capacity.as_deref().or(self.request.as_deref())
    }
}

/// Quantities arrive as strings, but a hand-written manifest may carry a bare number.
fn quantity(v: &Value, path: &[&str]) -> Option<Arc<str>> {
    match at(v, path)? {
        Value::String(s) => Some(pooled(s)),
        Value::Number(n) => Some(pooled(&n.to_string())),
        _ => None,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClaimRef {
    pub namespace: String,
    pub name: String,
    pub uid: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pv {
    // Shared as `Pvc`'s are.
    /// `Available`, `Bound`, `Released`, `Failed`, `Pending`.
    pub phase: Field<Arc<str>>,
    /// `Retain`, `Delete`, `Recycle`.
    pub reclaim_policy: Field<Arc<str>>,
    pub claim_ref: Option<ClaimRef>,
    pub storage_class: Option<Arc<str>>,
    pub capacity: Option<Arc<str>>,
}

impl Pv {
    pub fn parse(v: &Value) -> Self {
        let claim_ref = at(v, &["spec", "claimRef"]).and_then(|c| {
            Some(ClaimRef {
                namespace: opt_str(c, &["namespace"]).unwrap_or_default(),
                name: opt_str(c, &["name"])?,
                uid: opt_str(c, &["uid"]).filter(|u| !u.is_empty()),
            })
        });
        Pv {
            phase: shared_at(v, &["status", "phase"]),
            reclaim_policy: shared_at(v, &["spec", "persistentVolumeReclaimPolicy"]),
            claim_ref,
            storage_class: opt_shared(v, &["spec", "storageClassName"]),
            capacity: quantity(v, &["spec", "capacity", "storage"]),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StorageClass {
    /// Absent means `Delete`, the API default.
    pub reclaim_policy: Field<String>,
    pub provisioner: Option<String>,
}

impl StorageClass {
    pub fn parse(v: &Value) -> Self {
        StorageClass {
            reclaim_policy: str_at(v, &["reclaimPolicy"]),
            provisioner: opt_str(v, &["provisioner"]),
        }
    }

    pub fn effective_reclaim_policy(&self) -> Option<&str> {
        match &self.reclaim_policy {
            Field::Known(p) => Some(p),
            Field::Missing => Some("Delete"),
            Field::Invalid(_) => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pod {
    pub phase: Field<String>,
    /// Claim names of `spec.volumes[].persistentVolumeClaim`.
    pub claims: Vec<String>,
    pub node: Option<String>,
}

impl Pod {
    pub fn parse(v: &Value) -> Self {
        Pod {
            phase: str_at(v, &["status", "phase"]),
            claims: array_at(v, &["spec", "volumes"])
                .iter()
                .filter_map(|vol| opt_str(vol, &["persistentVolumeClaim", "claimName"]))
                .collect(),
            node: opt_str(v, &["spec", "nodeName"]),
        }
    }

    pub fn is_finished(&self) -> bool {
        matches!(self.phase.as_deref(), Some("Succeeded" | "Failed"))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InvolvedObject {
    // Thousands of Events name a few kinds in a few namespaces: shared.
    pub kind: SharedStr,
    pub namespace: SharedStr,
    pub name: SharedStr,
    pub uid: Option<crate::model::inline_str::Uid>,
}

/// An Event's message is cut here, and says so: anyone who may create Events in a namespace
/// could otherwise make every watcher hold megabytes per Event (3,000 Events of 64 KiB took
/// `serve` from ~17 to ~220 MiB).
pub const EVENT_MESSAGE_MAX: usize = 4 << 10;
/// Type, reason and source: a word each in practice, and shared through a pool.
const EVENT_WORD_MAX: usize = 256;

/// `s` cut to at most `max` bytes (at a character boundary), then `… (cut at N KiB)`.
fn cut(mut s: String, max: usize) -> String {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    if max >= 1024 {
        s.push_str(&format!("… (cut at {} KiB)", max / 1024));
    } else {
        s.push_str(&format!("… (cut at {max} bytes)"));
    }
    s
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Event {
    // Type, reason, message and source are shared (`Arc<str>`): the report copies them into
    // each restore's event list and history, and thousands of Events repeat the same few
    // types, reasons and sources.
    pub involved: InvolvedObject,
    /// `Normal` or `Warning`.
    pub type_: Option<Arc<str>>,
    pub reason: Option<Arc<str>>,
    pub message: Option<Arc<str>>,
    pub count: Option<i64>,
    pub first: Option<Timestamp>,
    pub last: Option<Timestamp>,
    pub source: Option<Arc<str>>,
}

impl Event {
    pub fn parse(v: &Value) -> Self {
        let io = at(v, &["involvedObject"]).or_else(|| at(v, &["regarding"]));
        let involved = io
            .map(|o| InvolvedObject {
                kind: SharedStr::new(&opt_str(o, &["kind"]).unwrap_or_default()),
                namespace: SharedStr::new(&opt_str(o, &["namespace"]).unwrap_or_default()),
                name: SharedStr::own(&opt_str(o, &["name"]).unwrap_or_default()),
                uid: opt_str(o, &["uid"])
                    .filter(|u| !u.is_empty())
                    .map(Into::into),
            })
            .unwrap_or_default();
        let first = time_at(v, &["firstTimestamp"]).known().copied();
        let event_time = time_at(v, &["eventTime"]).known().copied();
        let last = time_at(v, &["lastTimestamp"])
            .known()
            .copied()
            .or(event_time)
            .or(first);
        let word = |s: String| pooled(&cut(s, EVENT_WORD_MAX));
        Event {
            involved,
            type_: opt_str(v, &["type"]).map(word),
            reason: opt_str(v, &["reason"]).map(word),
            // Redacted before the final cut so a secret is never half shown, on a first cut
            // that bounds the work a huge message costs.
            message: opt_str(v, &["message"])
                .or_else(|| opt_str(v, &["note"]))
                .map(|m| {
                    let m = redact_message(cut(m, 2 * EVENT_MESSAGE_MAX));
                    Arc::from(cut(m, EVENT_MESSAGE_MAX))
                }),
            count: i64_at(v, &["count"]).known().copied(),
            first: first.or(event_time),
            last,
            source: opt_str(v, &["source", "component"])
                .or_else(|| opt_str(v, &["reportingComponent"]))
                .or_else(|| opt_str(v, &["reportingController"]))
                .map(word),
        }
    }

    pub fn is_warning(&self) -> bool {
        self.type_.as_deref() == Some("Warning")
    }

    /// The message as the controller wrote it: client-go's EventCorrelator folds the 11th and
    /// later distinct messages of one reason on one object within 10 minutes into one Event
    /// whose message is the newest one behind `COMBINED_PREFIX` (seen on a real server:
    /// `(combined from similar events): Pre-restore preparation complete`). The reason stays.
    pub fn message_text(&self) -> Option<&str> {
        self.message
            .as_deref()
            .map(|m| m.strip_prefix(COMBINED_PREFIX).unwrap_or(m))
    }

    /// Folded by the EventCorrelator: earlier messages of the same reason are not all there.
    pub fn combined(&self) -> bool {
        self.message
            .as_deref()
            .is_some_and(|m| m.starts_with(COMBINED_PREFIX))
    }
}

/// What client-go puts before the message of an Event that stands for several.
pub const COMBINED_PREFIX: &str = "(combined from similar events): ";
