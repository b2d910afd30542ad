//! One stored object: its metadata, its typed view, and its whole content as compact JSON text
//! (for the YAML view), with the noise stripped and the secrets redacted at the door.

use super::kind::Kind;
use super::meta::Meta;
use super::objects::*;
use serde_json::Value;
use std::ops::Deref;
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Obj<T> {
    pub meta: Meta,
    pub spec: T,
    /// The object as JSON text: `managedFields` and `last-applied-configuration` removed,
    /// secrets redacted. Packed text, not a `Value`, because it is read only when a person
    /// asks (or the history diffs an update).
    pub raw: super::packed::Packed,
}

impl<T> Obj<T> {
    /// The displayable JSON text.
    pub fn text(&self) -> String {
        self.raw.unpack().unwrap_or_default()
    }
}

impl<T> Deref for Obj<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.spec
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("not an object")]
    NotAnObject,
    #[error("no apiVersion/kind")]
    NoKind,
    #[error("kind {kind} ({api_version}) is not one restorewatch reads")]
    UnknownKind { api_version: String, kind: String },
    #[error("{kind} without metadata.name")]
    NoName { kind: String },
}

macro_rules! any_object {
    ($($variant:ident => $ty:ty),* $(,)?) => {
        /// An object of any watched kind, shared: allocated once at its own kind's size (a
        /// list of 10,000 objects is 10,000 pointers, not 10,000 copies of the largest kind),
        /// and handed to the store without another copy.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum AnyObject {
            $($variant(Arc<Obj<$ty>>),)*
        }

        impl AnyObject {
            pub fn kind(&self) -> Kind {
                match self {
                    $(AnyObject::$variant(_) => Kind::$variant,)*
                }
            }

            pub fn meta(&self) -> &Meta {
                match self {
                    $(AnyObject::$variant(o) => &o.meta,)*
                }
            }

            pub fn meta_mut(&mut self) -> &mut Meta {
                match self {
                    $(AnyObject::$variant(o) => &mut Arc::make_mut(o).meta,)*
                }
            }

            /// Whether the object's text is kept (see `parse_watched`).
            pub fn has_text(&self) -> bool {
                match self {
                    $(AnyObject::$variant(o) => !o.raw.is_empty(),)*
                }
            }

            /// The displayable JSON text.
            pub fn raw(&self) -> String {
                match self {
                    $(AnyObject::$variant(o) => o.text(),)*
                }
            }

            fn build(kind: Kind, meta: Meta, v: &Value, raw: super::packed::Packed) -> AnyObject {
                match kind {
                    $(Kind::$variant => AnyObject::$variant(Arc::new(Obj { meta, spec: <$ty>::parse(v), raw })),)*
                }
            }
        }
    };
}

any_object! {
    Namespace => Namespace,
    PersistentVolumeClaim => Pvc,
    PersistentVolume => Pv,
    StorageClass => StorageClass,
    Pod => Pod,
    Event => Event,
    RestoreJob => RestoreJob,
    Backup => Backup,
    DataVolume => DataVolume,
    VirtualMachine => VirtualMachine,
    VirtualMachineInstance => Vmi,
    HelmRelease => HelmRelease,
    VeleroRestore => VeleroRestore,
    DataDownload => DataDownload,
    VeleroBackup => VeleroBackup,
    CnpgCluster => CnpgCluster,
    CnpgBackup => CnpgBackup,
    ObjectStore => ObjectStore,
    Postgres => PostgresApp,
}

const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
pub use super::secrets::REDACTED;

/// Removes what costs memory and helps no one: server-side field ownership and kubectl's copy of
/// the last applied manifest.
pub fn strip_noise(v: &mut Value) {
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
        if let Some(ann) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
            ann.remove(LAST_APPLIED);
            if ann.is_empty() {
                meta.remove("annotations");
            }
        }
    }
}

/// Reads one object. Kind-specific fields never fail the object; only an object that cannot be
/// identified (no kind, no name) or is of a kind restorewatch does not read is refused.
pub fn parse_object(v: Value) -> Result<AnyObject, ParseError> {
    parse(v, true)
}

/// Reads one object from a watch: as `parse_object`, but the kinds a cluster has thousands of
/// (`text_kept_when_watched`) keep no text, only what the analysis judges: their YAML view
/// reads the object from the API server when asked (`held::held_json` meanwhile), and their
/// history diffs the held fields. A busy cluster's Events are the most numerous objects
/// watched, and nothing shows an Event's YAML.
pub fn parse_watched(v: Value) -> Result<AnyObject, ParseError> {
    parse(v, false)
}

/// Whether the live watch keeps an object's text: only for the kinds a cluster has few of
/// (RestoreJobs, VMs, releases, Velero and CNPG objects), whose full text the history diffs.
/// The real server's 20k-object dump: 16k PVCs, PVs and DataVolumes held ~3 MB of packed text
/// that only a YAML view ever read.
pub fn text_kept_when_watched(kind: Kind) -> bool {
    !matches!(
        kind,
        Kind::Namespace
            | Kind::StorageClass
            | Kind::Pod
            | Kind::Event
            | Kind::PersistentVolumeClaim
            | Kind::PersistentVolume
            | Kind::DataVolume
    )
}

fn parse(mut v: Value, keep_all_text: bool) -> Result<AnyObject, ParseError> {
    if !v.is_object() {
        return Err(ParseError::NotAnObject);
    }
    let api_version = v
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let api_kind = v
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if api_version.is_empty() || api_kind.is_empty() {
        return Err(ParseError::NoKind);
    }
    let kind = Kind::from_api(&api_version, &api_kind).ok_or(ParseError::UnknownKind {
        api_version,
        kind: api_kind.clone(),
    })?;
    // Meta first: it reads managedFields times before they are stripped.
    let meta = Meta::parse(&v).ok_or(ParseError::NoName { kind: api_kind })?;
    if kind == Kind::Event && !keep_all_text {
        // Nothing reads a watched Event's labels, annotations or writers, and whoever may
        // create Events may make them large.
        let meta = Meta {
            labels: Default::default(),
            annotations: Default::default(),
            managed: Box::default(),
            ..meta
        };
        return Ok(AnyObject::build(
            kind,
            meta,
            &v,
            super::packed::Packed::none(),
        ));
    }
    if !keep_all_text && !text_kept_when_watched(kind) {
        return Ok(AnyObject::build(
            kind,
            meta,
            &v,
            super::packed::Packed::none(),
        ));
    }
    strip_noise(&mut v);
    // Typed fields are read before redaction, which only hides them from display.
    let mut shown = v.clone();
    super::secrets::redact_for_display(&mut shown);
    let template = format!("{}/{}", kind.info().api_version(), kind.info().api_kind);
    let raw = super::packed::Packed::pack_like(
        &template,
        &serde_json::to_string(&shown).unwrap_or_default(),
    );
    Ok(AnyObject::build(kind, meta, &v, raw))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_watched_event_keeps_what_the_analysis_reads_and_no_text() {
        let ev = json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "restore-vm1.1", "namespace": "ns"},
            "involvedObject": {"kind": "RestoreJob", "name": "restore-vm1", "namespace": "ns"},
            "reason": "WaitingForVelero", "message": "Waiting for Velero Restore", "type": "Normal"});
        let (Ok(AnyObject::Event(watched)), Ok(AnyObject::Event(read))) =
            (parse_watched(ev.clone()), parse_object(ev))
        else {
            panic!("not read as Events");
        };
        assert_eq!(watched.spec, read.spec);
        assert_eq!(watched.meta, read.meta);
        assert_eq!(watched.text(), "");
        assert!(read.text().contains("Waiting for Velero Restore"));
    }
}
