//! A source made of snapshot files (`kubectl get -o yaml|json` dumps): read once, never
//! changing (`pipeline::still` keeps its analysis moving with the clock).

use crate::cluster::files::{LoadProblem, load_bytes};
use crate::cluster::{Snapshot, SourceInfo};
use std::path::PathBuf;

/// Reads every file (`-` is stdin) into one snapshot. Unreadable documents are returned as
/// problems; an unreadable file is an error.
pub fn load_files(paths: &[PathBuf]) -> anyhow::Result<(Snapshot, Vec<LoadProblem>)> {
    load_files_limited(paths, crate::cluster::input::DEFAULT_MAX_INPUT)
}

/// `load_files`, refusing any file past `max_input` bytes.
pub fn load_files_limited(
    paths: &[PathBuf],
    max_input: u64,
) -> anyhow::Result<(Snapshot, Vec<LoadProblem>)> {
    let mut objects = Vec::new();
    let mut problems = Vec::new();
    let mut names = Vec::new();
    for p in paths {
        let (bytes, origin) = crate::cluster::input::read_input(p, max_input)?;
        let origin = if p.as_os_str() == "-" {
            "-".to_string()
        } else {
            origin
        };
        let loaded = load_bytes(&bytes, &origin);
        drop(bytes);
        objects.extend(loaded.objects);
        problems.extend(loaded.problems);
        names.push(origin);
    }
    // The newest time any object shows is the best guess of when the dump was taken.
    let newest_object = objects
        .iter()
        .filter_map(|o| {
            let m = o.meta();
            m.last_change.or(m.created)
        })
        .max();
    let mut snap = Snapshot::from_objects(objects);
    snap.source = SourceInfo::Files {
        files: names,
        newest_object,
    };
    Ok((snap, problems))
}
