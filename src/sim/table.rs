//! `meta.k8s.io/v1 Table` responses: what `kubectl get` asks for and prints. Columns follow the
//! real server's printers for the core kinds and a short, useful set for the CRDs.

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::model::Kind;
use crate::sim::clock::human_age;

/// How much of each object a row carries (`includeObject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncludeObject {
    None,
    Metadata,
    Object,
}

impl IncludeObject {
    pub fn parse(s: Option<&str>) -> Self {
        match s {
            Some("None") => IncludeObject::None,
            Some("Object") => IncludeObject::Object,
            _ => IncludeObject::Metadata,
        }
    }
}

type Cell = fn(&Value, Timestamp) -> Value;

struct Column {
    name: &'static str,
    description: &'static str,
    priority: u8,
    cell: Cell,
}

fn s(v: &Value, ptr: &str) -> String {
    match v.pointer(ptr) {
        Some(Value::String(x)) => x.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn name(v: &Value, _: Timestamp) -> Value {
    json!(s(v, "/metadata/name"))
}

fn age(v: &Value, now: Timestamp) -> Value {
    json!(human_age(&s(v, "/metadata/creationTimestamp"), now))
}

fn access_modes(v: &Value, ptr: &str) -> String {
    let modes = v.pointer(ptr).and_then(Value::as_array);
    modes
        .map(|m| {
            m.iter()
                .filter_map(Value::as_str)
                .map(|m| match m {
                    "ReadWriteOnce" => "RWO",
                    "ReadOnlyMany" => "ROX",
                    "ReadWriteMany" => "RWX",
                    "ReadWriteOncePod" => "RWOP",
                    other => other,
                })
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default()
}

fn or_unset(x: String) -> Value {
    json!(if x.is_empty() {
        "<unset>".to_string()
    } else {
        x
    })
}

const NAME: Column = Column {
    name: "Name",
    description: "Name must be unique within a namespace.",
    priority: 0,
    cell: name,
};
const AGE: Column = Column {
    name: "Age",
    description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
    priority: 0,
    cell: age,
};

const fn col(name: &'static str, cell: Cell) -> Column {
    Column {
        name,
        description: "",
        priority: 0,
        cell,
    }
}

fn columns(kind: Kind) -> Vec<Column> {
    match kind {
        Kind::PersistentVolumeClaim => vec![
            NAME,
            col("Status", |v, _| json!(s(v, "/status/phase"))),
            col("Volume", |v, _| json!(s(v, "/spec/volumeName"))),
            col("Capacity", |v, _| json!(s(v, "/status/capacity/storage"))),
            col("Access Modes", |v, _| {
                json!(access_modes(v, "/status/accessModes"))
            }),
            col("StorageClass", |v, _| json!(s(v, "/spec/storageClassName"))),
            col("VolumeAttributesClass", |v, _| {
                or_unset(s(v, "/spec/volumeAttributesClassName"))
            }),
            AGE,
            Column {
                priority: 1,
                ..col("VolumeMode", |v, _| json!(s(v, "/spec/volumeMode")))
            },
        ],
        Kind::PersistentVolume => vec![
            NAME,
            col("Capacity", |v, _| json!(s(v, "/spec/capacity/storage"))),
            col("Access Modes", |v, _| {
                json!(access_modes(v, "/spec/accessModes"))
            }),
            col("Reclaim Policy", |v, _| {
                json!(s(v, "/spec/persistentVolumeReclaimPolicy"))
            }),
            col("Status", |v, _| json!(s(v, "/status/phase"))),
            col("Claim", |v, _| {
                let n = s(v, "/spec/claimRef/name");
                json!(if n.is_empty() {
                    n
                } else {
                    format!("{}/{n}", s(v, "/spec/claimRef/namespace"))
                })
            }),
            col("StorageClass", |v, _| json!(s(v, "/spec/storageClassName"))),
            col("VolumeAttributesClass", |v, _| {
                or_unset(s(v, "/spec/volumeAttributesClassName"))
            }),
            col("Reason", |v, _| json!(s(v, "/status/reason"))),
            AGE,
            Column {
                priority: 1,
                ..col("VolumeMode", |v, _| json!(s(v, "/spec/volumeMode")))
            },
        ],
        Kind::Namespace => vec![
            NAME,
            col("Status", |v, _| json!(s(v, "/status/phase"))),
            AGE,
        ],
        Kind::Pod => vec![
            NAME,
            col("Ready", |v, _| {
                let total = v
                    .pointer("/spec/containers")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                let ready = v
                    .pointer("/status/containerStatuses")
                    .and_then(Value::as_array)
                    .map_or(0, |c| {
                        c.iter()
                            .filter(|c| c.get("ready") == Some(&json!(true)))
                            .count()
                    });
                json!(format!("{ready}/{total}"))
            }),
            col("Status", |v, _| json!(s(v, "/status/phase"))),
            col("Restarts", |_, _| json!(0)),
            AGE,
        ],
        Kind::Event => vec![
            col("Last Seen", |v, now| {
                json!(human_age(&s(v, "/lastTimestamp"), now))
            }),
            col("Type", |v, _| json!(s(v, "/type"))),
            col("Reason", |v, _| json!(s(v, "/reason"))),
            col("Object", |v, _| {
                json!(format!(
                    "{}/{}",
                    s(v, "/involvedObject/kind").to_lowercase(),
                    s(v, "/involvedObject/name")
                ))
            }),
            col("Message", |v, _| json!(s(v, "/message"))),
        ],
        Kind::StorageClass => vec![
            NAME,
            col("Provisioner", |v, _| json!(s(v, "/provisioner"))),
            col("ReclaimPolicy", |v, _| json!(s(v, "/reclaimPolicy"))),
            col("VolumeBindingMode", |v, _| {
                json!(s(v, "/volumeBindingMode"))
            }),
            AGE,
        ],
        Kind::HelmRelease => vec![
            NAME,
            AGE,
            col("Ready", |v, _| json!(ready_condition(v, "status"))),
            col("Status", |v, _| json!(ready_condition(v, "message"))),
            col("Suspended", |v, _| {
                json!(
                    v.pointer("/spec/suspend")
                        .and_then(Value::as_bool)
                        .unwrap_or(false)
                )
            }),
        ],
        Kind::VirtualMachine => vec![
            NAME,
            AGE,
            col("Status", |v, _| json!(s(v, "/status/printableStatus"))),
            col("Ready", |v, _| json!(ready_condition(v, "status"))),
        ],
        Kind::VirtualMachineInstance => {
            vec![NAME, AGE, col("Phase", |v, _| json!(s(v, "/status/phase")))]
        }
        Kind::DataVolume => vec![
            NAME,
            col("Phase", |v, _| json!(s(v, "/status/phase"))),
            col("Progress", |v, _| json!(s(v, "/status/progress"))),
            AGE,
        ],
        Kind::DataDownload => vec![
            NAME,
            col("Status", |v, _| json!(s(v, "/status/phase"))),
            col("Bytes Done", |v, _| {
                json!(s(v, "/status/progress/bytesDone"))
            }),
            col("Total Bytes", |v, _| {
                json!(s(v, "/status/progress/totalBytes"))
            }),
            col("PVC", |v, _| json!(s(v, "/spec/targetVolume/pvc"))),
            AGE,
        ],
        Kind::CnpgCluster => vec![
            NAME,
            AGE,
            col("Instances", |v, _| json!(s(v, "/status/instances"))),
            col("Ready", |v, _| json!(s(v, "/status/readyInstances"))),
            col("Status", |v, _| json!(s(v, "/status/phase"))),
        ],
        Kind::RestoreJob | Kind::VeleroRestore | Kind::CnpgBackup | Kind::Backup => {
            vec![NAME, col("Phase", |v, _| json!(s(v, "/status/phase"))), AGE]
        }
        _ => vec![NAME, AGE],
    }
}

fn ready_condition(v: &Value, field: &str) -> String {
    v.pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|c| c.iter().find(|c| c.get("type") == Some(&json!("Ready"))))
        .and_then(|c| c.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

fn row_object(obj: &Value, include: IncludeObject) -> Option<Value> {
    match include {
        IncludeObject::None => None,
        IncludeObject::Object => Some(obj.clone()),
        IncludeObject::Metadata => Some(json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": obj.get("metadata").cloned().unwrap_or(json!({})),
        })),
    }
}

/// A Table of `objects`; `list_meta` becomes its `metadata` (resourceVersion, continue).
pub fn table(kind: Kind, objects: &[Value], include: IncludeObject, list_meta: Value) -> Value {
    let now = Timestamp::now();
    let cols = columns(kind);
    let defs: Vec<Value> = cols
        .iter()
        .map(|c| {
            json!({
                "name": c.name,
                "type": if c.name == "Restarts" { "integer" } else { "string" },
                "format": if c.name == "Name" { "name" } else { "" },
                "description": c.description,
                "priority": c.priority,
            })
        })
        .collect();
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let cells: Vec<Value> = cols.iter().map(|c| (c.cell)(o, now)).collect();
            let mut row = json!({ "cells": cells });
            if let Some(obj) = row_object(o, include) {
                row["object"] = obj;
            }
            row
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": defs,
        "rows": rows,
    })
}

/// Whether an `Accept` header asks for a Table (kubectl's human-readable output).
pub fn wants_table(accept: &str) -> bool {
    accept.split(',').any(|part| {
        let p: Vec<&str> = part.split(';').map(str::trim).collect();
        p.contains(&"as=Table") && p.contains(&"g=meta.k8s.io")
    })
}
