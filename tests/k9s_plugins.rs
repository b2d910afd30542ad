//! The k9s plugins run nothing from a context name (issue 27, point 7). k9s pastes `$CONTEXT`
//! and `$NAMESPACE` into a plugin's arguments as text and runs its command without a shell
//! (`exec.Command(command, args...)`, then each `pipes` entry split at spaces); a kubeconfig's
//! author names the contexts. Each plugin is run here as k9s runs it, with context names that a
//! shell would execute: nothing runs, and restorewatch, the real binary against the emulator,
//! gets the name as written.

use restorewatch::sim::{Sim, SimConfig};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn plugins() -> Vec<(String, Value)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/k9s/plugins.yaml");
    let doc: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(path).expect("plugins")).expect("YAML");
    doc["plugins"]
        .as_object()
        .expect("plugins")
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Context names that run `touch <marker>` if a shell ever reads them.
fn hostile(marker: &Path) -> Vec<String> {
    let m = marker.display();
    vec![
        format!("$(touch {m}.1)"),
        format!("\";touch {m}.2;\""),
        format!("`touch {m}.3`"),
        format!("';touch {m}.4;'"),
        format!("x && touch {m}.5"),
        // A name that looks like a flag must stay the context's value.
        "--kubeconfig=/nonexistent".to_string(),
    ]
}

/// k9s's substitution: each `$VAR` in an argument replaced by its value, as text.
fn substitute(arg: &str, context: &str, namespace: &str) -> String {
    arg.replace("$CONTEXT", context)
        .replace("$NAMESPACE", namespace)
}

/// Runs `plugin` as k9s does, its command and pipes found in `path` first: the command's own
/// exit status, and what the end of the pipeline printed.
fn run_as_k9s(
    plugin: &Value,
    context: &str,
    path: &str,
) -> (std::process::ExitStatus, std::process::Output) {
    let args: Vec<String> = plugin["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| substitute(a.as_str().expect("a string"), context, "tenant-a"))
        .collect();
    let command = plugin["command"].as_str().expect("command");
    let pipes: Vec<Vec<String>> = plugin["pipes"]
        .as_array()
        .map(|p| {
            p.iter()
                .map(|c| {
                    c.as_str()
                        .expect("a pipe")
                        .split(' ')
                        .map(str::to_string)
                        .collect()
                })
                .collect()
        })
        .unwrap_or_default();
    let mut first = Command::new(command);
    first.args(&args).env("PATH", path).stdin(Stdio::null());
    if pipes.is_empty() {
        let out = first.output().expect("the plugin's command runs");
        return (out.status, out);
    }
    // A pipeline, as k9s builds it: each process's output the next one's input.
    let mut running = vec![
        first
            .stdout(Stdio::piped())
            .spawn()
            .expect("the plugin's command runs"),
    ];
    let (last, middle) = pipes.split_last().expect("pipes is not empty");
    for p in middle {
        let input = Stdio::from(
            running
                .last_mut()
                .and_then(|c| c.stdout.take())
                .expect("stdout"),
        );
        let c = Command::new(&p[0])
            .args(&p[1..])
            .env("PATH", path)
            .stdin(input)
            .stdout(Stdio::piped())
            .spawn()
            .expect("a pipe runs");
        running.push(c);
    }
    let input = Stdio::from(
        running
            .last_mut()
            .and_then(|c| c.stdout.take())
            .expect("stdout"),
    );
    let out = Command::new(&last[0])
        .args(&last[1..])
        .env("PATH", path)
        .stdin(input)
        .output()
        .expect("the last pipe runs");
    let statuses: Vec<_> = running
        .iter_mut()
        .map(|c| c.wait().expect("a process ends"))
        .collect();
    (statuses[0], out)
}

/// A directory with stand-ins that record their arguments, one per line-separated NUL list.
fn recorders(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    for name in ["restorewatch", "less"] {
        let script = bin.join(name);
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\nprintf '%s\\0' \"$@\" >> '{}/{name}.args'\nprintf '\\n' >> '{}/{name}.args'\ncat >/dev/null 2>&1 || true\n",
                dir.display(),
                dir.display()
            ),
        )
        .expect("script");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    bin
}

fn recorded(dir: &Path, name: &str) -> Vec<Vec<String>> {
    std::fs::read_to_string(dir.join(format!("{name}.args")))
        .unwrap_or_default()
        .lines()
        .map(|l| {
            l.split('\0')
                .filter(|a| !a.is_empty())
                .map(str::to_string)
                .collect()
        })
        .collect()
}

fn assert_nothing_ran(marker: &Path) {
    for i in 1..=5 {
        let m = PathBuf::from(format!("{}.{i}", marker.display()));
        assert!(
            !m.exists(),
            "a context name ran a command: {} exists",
            m.display()
        );
    }
}

#[test]
fn a_hostile_context_name_reaches_restorewatch_as_written_and_runs_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    let marker = dir.path().join("pwned");
    let bin = recorders(dir.path());
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let all = plugins();
    assert_eq!(all.len(), 2, "{all:?}");
    let contexts = hostile(&marker);
    let mut calls_by_plugin = Vec::new();
    for (name, p) in &all {
        for context in &contexts {
            run_as_k9s(p, context, &path);
        }
        calls_by_plugin.push((name, p, recorded(dir.path(), "restorewatch")));
        let _ = std::fs::remove_file(dir.path().join("restorewatch.args"));
    }
    // Before anything else: had a shell read a name, the harm is done whatever it printed.
    assert_nothing_ran(&marker);
    for (name, p, calls) in calls_by_plugin {
        assert_eq!(p["command"], "restorewatch", "{name} runs no shell");
        assert_eq!(calls.len(), contexts.len(), "{name}: {calls:?}");
        for (call, context) in calls.iter().zip(&contexts) {
            assert!(
                call.contains(&format!("--context={context}")),
                "{name}: restorewatch got {call:?}, not the context {context:?}"
            );
            assert!(
                call.contains(&"--namespace=tenant-a".to_string()),
                "{call:?}"
            );
        }
    }
    assert_eq!(
        recorded(dir.path(), "less").len(),
        contexts.len(),
        "the check's output is paged"
    );
}

/// A kubeconfig whose context named `hostile` reaches the emulator, while the current context
/// reaches nothing: only the literal name can succeed.
fn kubeconfig(dir: &Path, server: &str, hostile: &[String]) -> PathBuf {
    let q = |s: &str| Value::String(s.to_string()).to_string();
    let mut text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: sim\n  cluster:\n    server: {}\n\
         - name: dead\n  cluster:\n    server: \"http://127.0.0.1:1\"\nusers:\n- name: u\n  user: {{}}\n\
         contexts:\n- name: dead\n  context:\n    cluster: dead\n    user: u\n",
        q(server)
    );
    for h in hostile {
        text.push_str(&format!(
            "- name: {}\n  context:\n    cluster: sim\n    user: u\n",
            q(h)
        ));
    }
    text.push_str("current-context: dead\n");
    let path = dir.join("kubeconfig");
    std::fs::write(&path, text).expect("kubeconfig");
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_check_plugin_runs_the_real_binary_on_the_context_as_named() {
    let dir = tempfile::tempdir().expect("tmp");
    let marker = dir.path().join("pwned");
    let sim = Sim::start(SimConfig::default()).await.expect("emulator");
    let contexts = hostile(&marker);
    let kc = kubeconfig(dir.path(), &sim.url(), &contexts);
    // The real restorewatch first on PATH, and `less` standing in as `cat` (no terminal here).
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_restorewatch"), bin.join("restorewatch"))
        .expect("link");
    let less = bin.join("less");
    std::fs::write(&less, "#!/bin/sh\nexec cat\n").expect("less");
    std::fs::set_permissions(&less, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let (_, check) = plugins()
        .into_iter()
        .find(|(n, _)| n == "restorewatch-check")
        .expect("the check plugin");
    let check_args: Vec<Value> = check["args"].as_array().expect("args").clone();
    let mut with_kubeconfig = check.clone();
    let mut args = check_args.clone();
    args.push(Value::String(format!("--kubeconfig={}", kc.display())));
    with_kubeconfig["args"] = Value::Array(args);
    let out = tokio::task::spawn_blocking(move || {
        contexts
            .iter()
            .map(|c| (c.clone(), run_as_k9s(&with_kubeconfig, c, &path)))
            .collect::<Vec<_>>()
    })
    .await
    .expect("join");
    for (context, (status, o)) in out {
        // Only the context named exactly so reaches the emulator; any other name fails.
        assert!(
            status.success() && !o.stdout.is_empty(),
            "context {context:?}: exit {:?}\n{}\n{}",
            status.code(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    assert_nothing_ran(&marker);
    sim.shutdown().await;
}
