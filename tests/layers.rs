//! The layers stay layered: which top-level modules of the crate each layer may name, checked
//! by scanning the source for `crate::` paths (a cheap stand-in for a module graph, good enough
//! to keep a stray `use` from tangling them again).

use std::collections::BTreeSet;
use std::path::Path;

/// Top-level modules named through `crate::` anywhere under `src/<layer>`, with a file where.
fn crate_modules_used(layer: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(layer);
    let mut dirs = vec![root.clone()];
    if let Some(file) = Some(root.with_extension("rs")).filter(|f| f.exists()) {
        scan(&file, &mut out);
    }
    while let Some(d) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                scan(&p, &mut out);
            }
        }
    }
    out
}

fn scan(path: &Path, out: &mut Vec<(String, String)>) {
    let text = std::fs::read_to_string(path).expect("source file readable");
    let code: String = text
        .lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let file = path.display().to_string();
    for (i, _) in code.match_indices("crate::") {
        // `restorewatch_crate::x` or `$crate::` are not ours to check.
        let before = code[..i].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest = &code[i + "crate::".len()..];
        for m in top_level_names(rest) {
            out.push((m, file.clone()));
        }
    }
}

/// `model::x` -> [model]; `{model, cluster::y}` -> [model, cluster].
fn top_level_names(rest: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    if !rest.starts_with('{') {
        return vec![ident(rest)];
    }
    let mut names = Vec::new();
    let mut depth = 0;
    let mut start = 1;
    for (i, c) in rest.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    names.push(ident(&rest[start..i]));
                    break;
                }
            }
            ',' if depth == 1 => {
                names.push(ident(&rest[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

fn assert_uses_none_of(layer: &str, forbidden: &[&str]) {
    let bad: BTreeSet<String> = crate_modules_used(layer)
        .into_iter()
        .filter(|(m, _)| forbidden.contains(&m.as_str()))
        .map(|(m, f)| format!("{f} uses crate::{m}"))
        .collect();
    assert!(
        bad.is_empty(),
        "layer {layer} reaches up or sideways:\n{bad:#?}"
    );
}

#[test]
fn analysis_uses_no_source_ui_action_or_cli() {
    assert_uses_none_of(
        "analysis",
        &[
            "cluster", "sim", "ui", "actions", "cli", "pipeline", "serve", "bench",
        ],
    );
}

#[test]
fn cluster_uses_no_cli_ui_analysis_or_actions() {
    assert_uses_none_of(
        "cluster",
        &[
            "cli", "ui", "analysis", "actions", "pipeline", "serve", "bench",
        ],
    );
}

#[test]
fn model_uses_nothing_of_ours() {
    let used: BTreeSet<String> = crate_modules_used("model")
        .into_iter()
        .filter(|(m, _)| m != "model")
        .map(|(m, f)| format!("{f} uses crate::{m}"))
        .collect();
    assert!(used.is_empty(), "model reaches up:\n{used:#?}");
}

#[test]
fn the_scan_sees_grouped_and_plain_paths() {
    // The checker itself: a rule that cannot see a path could never fail.
    assert_eq!(top_level_names("model::snapshot::Snapshot;"), vec!["model"]);
    assert_eq!(
        top_level_names("{model::Kind, cluster::{a, b}, analysis};"),
        vec!["model", "cluster", "analysis"]
    );
    let used: BTreeSet<String> = crate_modules_used("pipeline")
        .into_iter()
        .map(|(m, _)| m)
        .collect();
    assert!(
        used.contains("analysis") && used.contains("cluster"),
        "{used:?}"
    );
}

/// Documents (the check JSON, a restore's story) are built from the analysed picture alone:
/// the CLI, `serve` and the dashboard all stand on them, so they stand on none of those.
#[test]
fn documents_are_pure_and_below_every_front_end() {
    assert_uses_none_of(
        "document",
        &[
            "cluster", "sim", "ui", "actions", "cli", "pipeline", "serve", "bench",
        ],
    );
}

/// `serve` takes its options, exit statuses and JSON document from below (args, exit,
/// document), never from the CLI, and has no terminal UI or actions (it is read-only).
#[test]
fn serve_uses_no_cli_ui_or_actions() {
    assert_uses_none_of("serve", &["cli", "ui", "actions", "bench", "sim"]);
}

/// The shared command-line values and exit statuses stand below every command.
#[test]
fn args_and_exit_use_no_command() {
    for layer in ["args", "exit"] {
        assert_uses_none_of(
            layer,
            &[
                "cli", "serve", "bench", "ui", "actions", "analysis", "document", "pipeline",
            ],
        );
    }
}

/// The benchmark drives the dashboard's worker and measures `serve`, but never the CLI.
#[test]
fn bench_uses_no_cli() {
    assert_uses_none_of("bench", &["cli"]);
}
