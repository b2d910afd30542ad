//! `restorewatch report`: the story of a restore as the incident reports in `context/` tell it.
//! Report 003 from a dump with managedFields (the chart renders the Cluster, the driver writes
//! the old serverName back), report 000's cache race played live (the failed keep, the deleted
//! DataVolume, Velero skipping the disk, `Succeeded`, the `-orig` PVC left `Pending`), a restore
//! repaired through restorewatch (its action and writes from the audit log), and a hostile
//! object that must not change the document's structure.

mod actions_support;
mod common;

use restorewatch::analysis::RestoreId;
use restorewatch::document::story::{self, FactSource, Sources, Story};
use restorewatch::document::story_markdown;
use restorewatch::sim::{Scenario, Sim, SimConfig};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const PG_DUMP: &str = "tests/fixtures/history/servername-reverted-managed-fields.yaml";

fn report(args: &[&str], state: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_restorewatch"))
        .arg("report")
        .args(args)
        .env("XDG_STATE_HOME", state)
        .env("NO_COLOR", "1")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("restorewatch runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn row_of(md: &str, needle: &[&str]) -> usize {
    md.lines()
        .position(|l| needle.iter().all(|n| l.contains(n)))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{md}"))
}

/// Report 003 from a kubectl dump: the timeline reads helm-controller applying the Cluster,
/// then cozystack-cnpg-backup-driver applying the plugins (the old serverName) four seconds
/// later; the serverName table shows the divergence; the verdict names the repair.
#[test]
fn report_003_reads_the_chart_then_the_driver_writing_the_old_server_name_back() {
    let state = tempfile::tempdir().unwrap();
    let (code, md, err) = report(
        &[
            "tenant-a/restore-orders",
            "--snapshot",
            PG_DUMP,
            "--now",
            "2026-11-20T10:05:00Z",
        ],
        state.path(),
    );
    assert_eq!(code, 0, "{err}");
    let chart = row_of(
        &md,
        &[
            "10:00:45",
            "`Cluster/tenant-a/postgres-orders`",
            "`helm-controller` (`Apply`)",
        ],
    );
    let driver = row_of(
        &md,
        &[
            "10:00:49",
            "`Cluster/tenant-a/postgres-orders`",
            "`cozystack-cnpg-backup-driver` (`Apply`)",
            "`spec.plugins`",
        ],
    );
    assert!(chart < driver, "the chart rendered first");
    row_of(
        &md,
        &["Cluster barman plugin `serverName`", "`postgres-orders`"],
    );
    assert!(
        md.contains("**Verdict:** needs attention: `servername-reverted`"),
        "{md}"
    );
    assert!(md.contains("`restorewatch action fix-servername --restore tenant-a/restore-orders`"));
    assert!(md.contains("field changes and deletions: not kept by this source"));
    insta::assert_snapshot!("report_003_servername_reverted", md);

    let (code, json, err) = report(
        &[
            "restore-orders",
            "-n",
            "tenant-a",
            "--snapshot",
            PG_DUMP,
            "--now",
            "2026-11-20T10:05:00Z",
            "-o",
            "json",
        ],
        state.path(),
    );
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&json).expect("one JSON document");
    assert_eq!(doc["restore"], "tenant-a/restore-orders");
    assert_eq!(doc["postgres"]["serverNameMatches"], false);
    assert_eq!(
        doc["open"],
        serde_json::json!(["servername-collision", "servername-reverted"])
    );
    let writes: Vec<&str> = doc["timeline"]
        .as_array()
        .expect("timeline")
        .iter()
        .filter(|f| f["source"] == "write" && f["object"] == "Cluster/tenant-a/postgres-orders")
        .filter_map(|f| f["writer"].as_str())
        .collect();
    assert_eq!(
        writes,
        ["helm-controller", "cozystack-cnpg-backup-driver", "manager"]
    );
}

#[test]
fn a_restore_that_is_not_there_is_said_so_and_exits_2() {
    let state = tempfile::tempdir().unwrap();
    let (code, out, err) = report(&["tenant-a/nope", "--snapshot", PG_DUMP], state.path());
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains("no RestoreJob tenant-a/nope"), "{err}");
}

/// Times and the ages derived from them move with the clock of the run; everything else in a
/// live story of a scenario is fixed by the scenario file.
fn mask_times(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let b = md.as_bytes();
    let mut i = 0;
    let digit = |j: usize| b.get(j).is_some_and(u8::is_ascii_digit);
    while i < b.len() {
        // YYYY-MM-DD[ T]HH:MM:SS[.frac][Z]
        let stamp = (0..4).all(|k| digit(i + k))
            && b.get(i + 4) == Some(&b'-')
            && b.get(i + 10).is_some_and(|c| *c == b' ' || *c == b'T')
            && digit(i + 11)
            && b.get(i + 13) == Some(&b':');
        if stamp {
            let mut j = i + 19;
            while j < b.len() && (b[j] == b'.' || b[j].is_ascii_digit() || b[j] == b'Z') {
                j += 1;
            }
            out.push_str("<time>");
            i = j;
            continue;
        }
        let c = md[i..].chars().next().unwrap_or(' ');
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Report 000's event: the rename's read-back through the cache failed.
fn failed_keep(f: &story::Fact) -> bool {
    f.source == FactSource::Event
        && f.warning
        && f.what
            .plain()
            .contains("Failed to keep old PVC vm-disk-data: failed to get -orig PVC")
}

fn without_timeline(md: &str) -> String {
    let Some(start) = md.find("## Timeline") else {
        return md.to_string();
    };
    let end = md[start + 2..]
        .find("\n## ")
        .map_or(md.len(), |i| start + 2 + i + 1);
    format!("{}{}", &md[..start], &md[end..])
}

fn id() -> RestoreId {
    RestoreId {
        namespace: "tenant-a".into(),
        name: "restore-test".into(),
    }
}

fn watching() -> Sources {
    Sources {
        watching: true,
        audit_unreadable: 0,
        kube_system_uid: None,
    }
}

/// What a settled picture of a scenario shows the same on every run: all but the times, the
/// timeline (its order within one second depends on the speed the scenario is played at:
/// Events carry whole seconds, the watch its own clock) and the footer naming the source.
fn settled(md: &str) -> String {
    mask_times(&without_timeline(md))
        .lines()
        .filter(|l| !l.starts_with("_Written by restorewatch"))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn story_of(frame: &restorewatch::pipeline::Frame, name: &str) -> Option<Story> {
    let mut id = id();
    id.name = name.into();
    story::build(&frame.report, &frame.snapshot, &id, &[], watching())
}

/// Report 000's lab run, watched live: the timeline holds the failed keep and the RestoreJob
/// turning `Succeeded`; the DataVolumes were deleted, Velero made no DataDownload for the data
/// disk, its `-orig` PVC is `Pending`; the verdict says the disk was not restored although the
/// restore succeeded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_000_reads_the_failed_keep_the_deleted_disk_and_a_success_that_restored_nothing() {
    let sim = Sim::start(SimConfig::default()).await.expect("emulator");
    let source = common::watch_everything(sim.client().expect("client"));
    let mut frames = source.frames.clone();
    common::wait_frame(
        &mut frames,
        20,
        "a first frame",
        |_| true,
        |_| String::new(),
    )
    .await;
    let run = sim.play(
        Scenario::load("vm-rename-cache-race").expect("built-in"),
        1000.0,
    );
    assert!(run.finished().await.errors.is_empty());
    // The end state, read once through the API after every simulated controller settled:
    // the live picture converges to it (each watch delivers on its own, so a frame on the
    // way may mix kinds from different moments).
    sim.controllers_idle().await;
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc, None).expect("kubeconfig");
    let listed = restorewatch::cluster::list_once::snapshot(&restorewatch::args::ClusterArgs {
        kubeconfig: Some(kc),
        ..Default::default()
    })
    .await
    .expect("one LIST of every kind");
    let report =
        restorewatch::analysis::analyze(&listed, &Default::default(), jiff::Timestamp::now());
    let end = story::build(&report, &listed, &id(), &[], watching())
        .map(|s| settled(&story_markdown::render(&s)))
        .expect("the restore is listed");
    let frame = common::wait_frame(
        &mut frames,
        30,
        "the live picture of the scenario's end state, with its Events",
        |f| {
            story_of(f, "restore-test").is_some_and(|s| {
                s.timeline.iter().any(failed_keep) && settled(&story_markdown::render(&s)) == end
            })
        },
        |f| {
            f.and_then(|f| story_of(f, "restore-test"))
                .map(|s| {
                    format!(
                        "{}\n--- want ---\n{end}",
                        settled(&story_markdown::render(&s))
                    )
                })
                .unwrap_or_default()
        },
    )
    .await;
    let s = story_of(&frame, "restore-test").expect("waited for it");
    assert!(s.timeline.iter().any(failed_keep), "{:#?}", s.timeline);
    let phase_change = |to: &str| {
        s.timeline.iter().any(|f| {
            f.source == FactSource::Change
                && f.object.as_deref() == Some("RestoreJob/tenant-a/restore-test")
                && f.what.plain() == format!("status.phase: Running → {to}")
        })
    };
    assert!(phase_change("Succeeded"), "{:#?}", s.timeline);
    let step = |id: &str| {
        s.steps
            .iter()
            .find(|x| x.id.as_str() == id)
            .map(|x| (x.state.as_str(), x.detail.clone()))
    };
    assert_eq!(step("delete-datavolumes").map(|x| x.0), Some("done"));
    assert_eq!(
        step("data-download"),
        Some(("failed", "no DataDownload for vm-disk-data".to_string()))
    );
    let data = s
        .disks
        .iter()
        .find(|d| d.disk == "vm-disk-data")
        .expect("the data disk");
    assert_eq!(data.download, None, "Velero skipped the disk");
    let orig = data.orig.as_ref().expect("the -orig PVC");
    assert_eq!(orig.phase.as_deref(), Some("Pending"));
    assert!(!data.proven);
    assert!(
        s.disks
            .iter()
            .any(|d| d.disk == "vm-disk-system" && d.proven),
        "the system disk was restored"
    );
    assert_eq!(
        s.verdict.plain(),
        // Not "data lost": nothing was deleted, the disk was merely not restored (issue 25).
        "not restored: disk vm-disk-data still holds its pre-restore content although the RestoreJob succeeded"
    );
    // The timeline's order within one second depends on the speed the scenario is played at
    // (Events carry whole seconds, the watch its own clock): the golden holds the rest.
    insta::assert_snapshot!("report_000_rename_cache_race", end);
    drop(source);
    sim.shutdown().await;
}

/// The shape of a Markdown document: each line's kind and, for a table row, its cells (the
/// `|` not escaped). Cluster text must never change it.
fn structure(md: &str) -> Vec<String> {
    md.lines()
        .map(|l| {
            // Cells only in a table row: in prose a `|` inside a code span is text (and must
            // stay unescaped there, or the backslash would show).
            let cells = l
                .char_indices()
                .filter(|(i, c)| l.starts_with('|') && *c == '|' && !l[..*i].ends_with('\\'))
                .count();
            let head: String = l
                .chars()
                .take_while(|c| matches!(c, '#' | '-' | ' ' | '*' | '|' | '_'))
                .collect();
            format!("{head:.4} {cells}")
        })
        .collect()
}

/// An object whose values carry backticks, pipes, newlines, a terminal escape, HTML and a
/// link: the report has the same structure as for the plain object, no raw control character,
/// and every hostile value stays inside a code span or escaped prose.
#[test]
fn a_hostile_object_cannot_change_the_report_structure() {
    let dir = tempfile::tempdir().unwrap();
    let plain_dump = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(PG_DUMP))
        .expect("fixture");
    let evil = r#""x`` | y\n## Injected\r\u001b[2J<img src=x onerror=alert(1)> [a](http://evil) $x$ | **b**""#;
    let hostile_dump = plain_dump
        .replace(
            "newServerName: postgres-orders-restore-8ab55553f4a9b4bc",
            &format!("newServerName: {evil}"),
        )
        .replace(
            "message: Cluster postgres-orders and its PVCs are gone; HelmRelease postgres-orders resumed",
            &format!("message: {evil}"),
        );
    assert_ne!(plain_dump, hostile_dump);
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).expect("written");
        p.display().to_string()
    };
    let plain = write("plain.yaml", &plain_dump);
    let hostile = write("hostile.yaml", &hostile_dump);
    let run = |file: &str| {
        let (code, md, err) = report(
            &[
                "tenant-a/restore-orders",
                "--snapshot",
                file,
                "--now",
                "2026-11-20T10:05:00Z",
            ],
            dir.path(),
        );
        assert_eq!(code, 0, "{err}");
        md
    };
    let (plain_md, hostile_md) = (run(&plain), run(&hostile));
    assert!(
        hostile_md.contains("onerror"),
        "the value is shown: {hostile_md}"
    );
    assert!(
        !hostile_md.chars().any(|c| c.is_control() && c != '\n'),
        "a raw control character:\n{hostile_md:?}"
    );
    assert!(!hostile_md.contains("\n## Injected"), "{hostile_md}");
    assert_eq!(
        structure(&plain_md),
        structure(&hostile_md),
        "the hostile values changed the document's structure:\n{hostile_md}"
    );
}

/// A restore repaired through restorewatch: after `action resume-rename`, the live report
/// shows the action with each of its writes, who ran it and the outcome (from the audit log),
/// and the chain it left: the PV's claimRef on the `-orig` PVC.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restore_repaired_through_restorewatch_shows_the_action_and_its_writes() {
    let (sim, _client) = actions_support::sim_with_resync(
        actions_support::rename_state("orig-created"),
        Duration::from_millis(300),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc, None).expect("kubeconfig");
    let kc_arg = kc.display().to_string();
    let state = dir.path().to_path_buf();
    let bin = |args: Vec<String>| {
        let state = state.clone();
        tokio::task::spawn_blocking(move || {
            Command::new(env!("CARGO_BIN_EXE_restorewatch"))
                .args(&args)
                .env("XDG_STATE_HOME", &state)
                .env("NO_COLOR", "1")
                .output()
                .expect("restorewatch runs")
        })
    };
    let args = |a: &[&str]| {
        let mut v: Vec<String> = a.iter().map(|s| s.to_string()).collect();
        v.extend(["--kubeconfig".into(), kc_arg.clone()]);
        v
    };
    let before = bin(args(&["report", "tenant-a/restore-test"]))
        .await
        .expect("task");
    let before = String::from_utf8_lossy(&before.stdout).into_owned();
    assert!(!before.contains("restorewatch `resume-rename`"), "{before}");
    let succeeded = |out: std::process::Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let act = [
        "action",
        "resume-rename",
        "--restore",
        "tenant-a/restore-test",
        "--yes",
    ];
    succeeded(bin(args(&act)).await.expect("task"));
    let md = succeeded(
        bin(args(&["report", "tenant-a/restore-test"]))
            .await
            .expect("task"),
    );
    let actions: Vec<&str> = md
        .lines()
        .filter(|l| {
            l.contains("restorewatch `resume-rename` on `RestoreJob tenant-a/restore-test`")
        })
        .collect();
    // A conflict with the PV controller (it writes the PV too) is audited as "conflict,
    // re-planned" before the write that then succeeds: each write must show once as done.
    let done: Vec<&str> = actions
        .iter()
        .copied()
        .filter(|l| l.ends_with("→ `done` |"))
        .collect();
    assert!(done.len() >= 2, "each write its own line:\n{md}");
    assert!(
        done.iter()
            .any(|l| l.contains("delete") && l.contains("vm-disk-data")),
        "the original PVC's deletion: {actions:#?}"
    );
    assert!(
        done.iter().any(|l| l.contains("claimRef")),
        "the PV repointed: {actions:#?}"
    );
    row_of(
        &md,
        &["| -orig PV |", "claimRef `tenant-a/vm-disk-data-orig-de3e`"],
    );
    sim.shutdown().await;
}

/// `e` on the restores list writes the selected restore's report to a private file under the
/// reports folder (0600 in a 0700 folder it creates), says where in the status line, and the
/// `?` help lists the key.
#[cfg(unix)]
#[test]
fn the_dashboard_exports_the_selected_restores_report_with_one_key() {
    use crossterm::event::KeyCode;
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let reports = dir.path().join("state/reports");
    let mut a = common::ui_data::app(120, 40);
    a.opts.reports_dir = Some(reports.clone());
    common::press(&mut a, KeyCode::Char('e'));
    let status = a
        .status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default();
    assert!(
        status.starts_with("report of tenant-a/restore-test written to "),
        "{status}"
    );
    let file = std::path::PathBuf::from(status.rsplit(" written to ").next().unwrap_or(""));
    assert!(file.starts_with(&reports), "{}", file.display());
    let md = std::fs::read_to_string(&file).expect("the report file");
    assert!(md.starts_with("# Restore `tenant-a/restore-test`"), "{md}");
    assert!(md.contains("## Timeline"));
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(&reports), 0o700);
    assert!(common::render(&a).contains(&status[..40]), "said on screen");
    common::press(&mut a, KeyCode::Char('?'));
    assert!(common::render(&a).contains("write the restore's report"));
}
