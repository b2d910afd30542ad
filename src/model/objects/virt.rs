use super::super::field::Field;
use super::super::json::{array_at, bool_at, opt_shared, opt_str, shared_at, str_at};
use super::{Condition, conditions};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DataVolume {
    // Shared as `Pvc`'s are: a few values over thousands of DataVolumes.
    pub phase: Field<std::sync::Arc<str>>,
    /// `"45.2%"` as CDI reports it.
    pub progress: Option<std::sync::Arc<str>>,
    pub claim_name: Option<String>,
}

impl DataVolume {
    pub fn parse(v: &Value) -> Self {
        DataVolume {
            phase: shared_at(v, &["status", "phase"]),
            progress: opt_shared(v, &["status", "progress"]),
            claim_name: opt_str(v, &["status", "claimName"]),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VirtualMachine {
    /// `spec.runStrategy`, or derived from the older `spec.running` boolean.
    pub run_strategy: Field<String>,
    pub printable_status: Option<String>,
    /// DataVolume or PVC names the VM mounts.
    pub disk_claims: Vec<String>,
}

impl VirtualMachine {
    pub fn parse(v: &Value) -> Self {
        let run_strategy = match str_at(v, &["spec", "runStrategy"]) {
            Field::Missing => match bool_at(v, &["spec", "running"]) {
                Field::Known(true) => Field::Known("Always".to_string()),
                Field::Known(false) => Field::Known("Halted".to_string()),
                Field::Missing => Field::Missing,
                Field::Invalid(s) => Field::Invalid(s),
            },
            other => other,
        };
        let disk_claims = array_at(v, &["spec", "template", "spec", "volumes"])
            .iter()
            .filter_map(|vol| {
                opt_str(vol, &["dataVolume", "name"])
                    .or_else(|| opt_str(vol, &["persistentVolumeClaim", "claimName"]))
            })
            .collect();
        VirtualMachine {
            run_strategy,
            printable_status: opt_str(v, &["status", "printableStatus"]),
            disk_claims,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Vmi {
    pub phase: Field<String>,
}

impl Vmi {
    pub fn parse(v: &Value) -> Self {
        Vmi {
            phase: str_at(v, &["status", "phase"]),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HelmRelease {
    /// Absent means not suspended.
    pub suspend: Field<bool>,
    pub conditions: Vec<Condition>,
}

impl HelmRelease {
    pub fn parse(v: &Value) -> Self {
        HelmRelease {
            suspend: bool_at(v, &["spec", "suspend"]),
            conditions: conditions(v),
        }
    }

    /// `Some(true)` suspended, `Some(false)` not, `None` unreadable.
    pub fn is_suspended(&self) -> Option<bool> {
        self.suspend.or_default_if_missing(false)
    }
}
