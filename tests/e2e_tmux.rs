//! End to end, as a person uses it: the binary's `demo` in a real terminal (tmux), keys sent,
//! the screen read back, and the terminal checked after quitting. CI runs it on the release
//! binary (`RESTOREWATCH_E2E_BIN`); locally it uses the test build.

use std::process::Command;
use std::time::{Duration, Instant};

/// What the shell runs after the program: its exit status, whether the terminal is back in
/// canonical mode, then a marker to wait for.
const SHELL_AFTER: &str = "echo EXIT=$?; stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e -icanon; echo STTY-DONE; sleep 60";

struct Tmux {
    socket: String,
    _home: tempfile::TempDir,
}

impl Tmux {
    /// Starts `restorewatch ARGS` in a fresh tmux server with XDG folders of its own; `before`
    /// and `after` run in the same shell around it.
    fn start(name: &str, args: &str, before: &str, after: &str) -> Tmux {
        let home = tempfile::tempdir().expect("temp dir");
        Tmux::start_in(home, name, args, before, after)
    }

    /// `start` with XDG folders prepared by the caller (`state/`, `config/` inside `home`).
    fn start_in(
        home: tempfile::TempDir,
        name: &str,
        args: &str,
        before: &str,
        after: &str,
    ) -> Tmux {
        let bin = std::env::var("RESTOREWATCH_E2E_BIN")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_restorewatch").to_string());
        let state = home.path().join("state");
        let config = home.path().join("config");
        let script = format!(
            "{before} XDG_STATE_HOME={} XDG_CONFIG_HOME={} {bin} {args}; {after}",
            state.display(),
            config.display()
        );
        Tmux::start_script(home, name, &script)
    }

    /// Runs `script` under `sh -c` in a fresh tmux server.
    fn start_script(home: tempfile::TempDir, name: &str, script: &str) -> Tmux {
        let t = Tmux {
            socket: format!("rw-e2e-{name}-{}", std::process::id()),
            _home: home,
        };
        t.run(&[
            "new-session",
            "-d",
            "-s",
            "e2e",
            "-x",
            "140",
            "-y",
            "40",
            "sh",
            "-c",
            script,
        ]);
        t
    }

    fn state(&self) -> std::path::PathBuf {
        self._home.path().join("state")
    }

    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("tmux is required for the end-to-end test (apt-get install tmux)");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "e2e"])
    }

    /// The screen and what scrolled off it.
    fn history(&self) -> String {
        self.run(&["capture-pane", "-p", "-S", "-2000", "-t", "e2e"])
    }

    fn keys(&self, keys: &[&str]) {
        for k in keys {
            self.run(&["send-keys", "-t", "e2e", k]);
            // Keys of a person, not a paste: the dashboard handles each before the next.
            std::thread::sleep(Duration::from_millis(60));
        }
    }

    /// Waits (bounded) for the screen to satisfy `want`; fails showing the screen.
    fn wait(&self, what: &str, want: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if want(&s) {
                return s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "no screen with {what} within 30 s; the screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

#[test]
fn an_operator_finds_the_broken_restores_in_the_demo_and_the_terminal_comes_back() {
    let t = Tmux::start("tour", "demo --speed 20", "echo BEFORE-DEMO;", SHELL_AFTER);

    // The list comes up with every demo restore, and the broken ones carry error badges.
    let s = t.wait("the restores list", |s| {
        s.contains("restores[8]") && s.contains("vm-rename-cache") && s.contains("E ")
    });
    assert!(s.contains("NAMESPACE") && s.contains("FINDINGS"), "{s}");
    // The worst restore is on top: its row has an error badge.
    let first_row = s.lines().find(|l| l.contains("restore-")).unwrap_or("");
    assert!(
        first_row.contains('E'),
        "the first row is a broken restore: {first_row}"
    );

    // Each row names its worst finding beside the counts: the half-done rename, once the
    // simulated controller has left it half done.
    t.wait("the half-done rename's row naming its finding", |s| {
        s.lines().any(|l| {
            l.contains("demo-rename-half-done")
                && l.contains("1E")
                && l.contains("rename-half-done")
        })
    });

    // Open the half-done rename: the first screen says what is wrong, why and what to do,
    // beside the step timeline, without Tab.
    t.keys(&["/", "half-done", "Enter"]);
    t.wait("the filtered row", |s| s.contains("restores[1]"));
    t.keys(&["Enter"]);
    let s = t.wait("the restore detail with its findings", |s| {
        s.contains("restore demo-rename-half-done/restore-test")
            && s.contains("Findings")
            && s.contains("remedy")
    });
    assert!(
        s.contains("validate") && s.contains("velero-restore"),
        "the timeline is there:\n{s}"
    );
    assert!(
        s.contains("!✗ keep-disks"),
        "the step the finding is about is marked:\n{s}"
    );
    assert!(
        s.contains("rename-half-done") && s.contains("resume-rename: press a"),
        "the finding, its action and its key:\n{s}"
    );
    // Tab still walks the panes.
    t.keys(&["Tab"]);
    t.wait("the disks pane", |s| {
        s.contains("-orig-de3e") && !s.contains("remedy")
    });
    t.keys(&["Escape"]);
    t.wait("the filtered list again", |s| s.contains("restores[1]"));
    t.keys(&["Escape"]);
    t.wait("the list again", |s| s.contains("restores[8]"));

    // Report 003's restore: list -> detail -> its history, by Tab. The Cluster's field managers
    // say who wrote the serverName last: the backup driver, after the chart.
    t.keys(&["/", "servername-rev", "Enter"]);
    t.wait("the filtered row", |s| s.contains("restores[1]"));
    t.keys(&["Enter"]);
    t.wait("the Postgres restore's detail", |s| {
        s.contains("restore demo-servername-reverted/") && s.contains("History")
    });
    t.keys(&["Tab", "Tab", "Tab", "Tab"]);
    // The pane shows a window of the history, which grows as the demo plays: the driver's
    // write on the Cluster is what must be in it (the wait fails otherwise). Both values of
    // the revert, the writers' order and the chart's write are checked at the scenario's own
    // pace in tests/history.rs.
    t.wait("the history pane with the backup driver's write", |s| {
        s.contains("cozystack-cnpg-backup-driver Apply: spec.plugins")
    });
    t.keys(&["Escape"]);
    t.wait("the filtered list again", |s| s.contains("restores[1]"));
    // `h` on the list opens the restore on its history directly.
    t.keys(&["h"]);
    t.wait("the history by its key", |s| {
        s.contains("restore demo-servername-reverted/")
            && s.contains("writer cozystack-cnpg-backup-driver")
    });
    t.keys(&["Escape", "Escape"]);
    t.wait("the list again", |s| s.contains("restores[8]"));

    // Sorting by name: the header shows it.
    t.keys(&["N"]);
    t.wait("the list sorted by name", |s| s.contains("NAME↑"));
    t.keys(&["F"]);
    t.wait("worst first again", |s| s.contains("FINDINGS↓"));

    // The -orig PVC inventory, by command.
    t.keys(&[":", "orig", "Enter"]);
    let s = t.wait("the -orig PVCs", |s| s.contains("-orig PVCs["));
    assert!(s.contains("-orig-"), "{s}");

    // Back to restores, filtered.
    t.keys(&[":", "restores", "Enter", "/", "rename", "Enter"]);
    let s = t.wait("a filtered list", |s| s.contains("restores[2]"));
    let rows: Vec<&str> = s.lines().filter(|l| l.contains("restore-")).collect();
    assert_eq!(rows.len(), 2, "{s}");
    assert!(
        rows.iter().all(|r| r.contains("rename")),
        "only rows matching the filter: {rows:?}"
    );
    t.keys(&["Escape"]);

    // Help from the one keymap.
    t.keys(&["?"]);
    let s = t.wait("the help", |s| s.contains("help") && s.contains("freeze"));
    assert!(s.contains("filter"), "{s}");
    t.keys(&["Escape"]);

    // Quit: the program ends cleanly and the terminal is back in cooked mode.
    t.keys(&["q"]);
    let s = t.wait("the shell after quitting", |s| s.contains("STTY-DONE"));
    assert!(s.contains("EXIT=0"), "{s}");
    assert!(
        s.lines().any(|l| l.trim() == "icanon"),
        "the terminal must be back in canonical mode:\n{s}"
    );
    assert!(
        s.contains("BEFORE-DEMO"),
        "the alternate screen is left: the shell's screen is back:\n{s}"
    );
}

/// Reclaiming at scale, as an operator does it in the demo: from the list to a finished
/// restore's detail, then the `-orig` screen, two PVCs marked with Space and reclaimed in one
/// dialog with one typed confirmation.
#[test]
fn an_operator_reclaims_two_orig_pvcs_in_one_dialog_in_the_demo() {
    let t = Tmux::start("bulk", "demo --speed 20", "", "sleep 60");
    let state = t.state();
    t.wait("the restores list", |s| s.contains("restores[8]"));
    // The healthy VM restore, once finished: its two disks are kept as -orig PVCs.
    t.keys(&["/", "vm-healthy", "Enter"]);
    t.wait("the finished healthy restore", |s| {
        s.contains("restores[1]") && s.contains("Succeeded")
    });
    t.keys(&["Enter"]);
    t.wait("its detail", |s| s.contains("restore vm-healthy/"));
    t.keys(&["Escape", "Escape"]);
    t.wait("the whole list", |s| s.contains("restores[8]"));

    t.keys(&[":", "orig", "Enter"]);
    let s = t.wait("the -orig screen with its totals", |s| {
        s.contains("-orig PVCs[") && s.contains("reclaimable now")
    });
    assert!(s.contains("blocked"), "{s}");
    t.keys(&["/", "vm-healthy", "Enter"]);
    let s = t.wait("the two reclaimable -orig PVCs", |s| {
        s.contains("-orig PVCs[2]")
            && s.lines()
                .filter(|l| l.contains("vm-healthy") && l.contains("yes, PV back to Delete"))
                .count()
                == 2
    });
    assert!(s.contains("reclaimable now 2"), "{s}");
    t.keys(&["Space", "j", "Space"]);
    let s = t.wait("two marks", |s| s.contains("● 2 marked"));
    assert_eq!(
        s.lines().filter(|l| l.contains("● vm-disk-")).count(),
        2,
        "both rows show their mark:\n{s}"
    );

    t.keys(&["a"]);
    let s = t.wait("the bulk plan", |s| {
        s.contains("Type reclaim 2 to confirm") && s.contains("permitted")
    });
    assert!(s.contains("Will reclaim 2 of 2"), "{s}");
    // Enter alone runs nothing.
    t.keys(&["Enter"]);
    assert!(!t.screen().contains("reclaimed ·"), "{}", t.screen());
    t.run(&["send-keys", "-t", "e2e", "-l", "reclaim 2"]);
    t.keys(&["Enter"]);
    let s = t.wait("both reclaimed", |s| {
        s.contains("2 reclaimed · 0 refused or stopped · 0 to go")
    });
    assert_eq!(
        s.lines()
            .filter(|l| l.contains("✓") && l.contains("completed: 2 writes"))
            .count(),
        2,
        "each PVC's result:\n{s}"
    );
    t.keys(&["Escape"]);
    t.wait("the PVCs gone from the screen", |s| {
        s.contains("-orig PVCs[0]") && s.contains("bulk reclaim: 2 reclaimed, 0 refused")
    });
    let audit = std::fs::read_to_string(state.join("restorewatch/audit.jsonl"))
        .expect("the audit log exists");
    assert_eq!(audit.lines().count(), 4, "two writes per PVC:\n{audit}");
    t.keys(&["q"]);
}

/// Issue 5's promise, as an operator does it: in the demo's half-done-rename and
/// reverted-serverName restores, `a`, read the plan, type the name, and the restores complete.
#[test]
fn an_operator_repairs_both_demo_restores_from_the_dashboard() {
    let t = Tmux::start(
        "repair",
        "demo --scenario demo-servername-reverted --scenario demo-rename-half-done --speed 20",
        "",
        "sleep 60",
    );
    let state = t.state();
    let top_row = |s: &str| {
        s.lines()
            .find(|l| l.contains("restore-"))
            .unwrap_or("")
            .to_string()
    };

    // Both broken, the reverted serverName worst (two errors): on top.
    t.wait("both restores broken", |s| {
        s.lines()
            .filter(|l| l.contains("restore-") && l.contains('E'))
            .count()
            == 2
            && top_row(s).contains("demo-servername")
    });
    // `a` on a restore lists what applies, its findings' actions first; Enter reviews one.
    t.keys(&["a"]);
    t.wait("the action menu", |s| {
        s.contains("actions ·") && s.contains("fix-servername")
    });
    t.keys(&["Enter"]);
    t.wait("the fix-servername plan", |s| {
        s.contains("Type restore-pg1 to confirm") && s.contains("permitted")
    });
    // Enter alone never confirms.
    t.keys(&["Enter"]);
    let s = t.screen();
    assert!(
        !s.contains("completed"),
        "Enter without the name ran the action:\n{s}"
    );
    t.run(&["send-keys", "-t", "e2e", "-l", "restore-pg1"]);
    t.keys(&["Enter"]);
    t.wait("the repair done", |s| s.contains("completed: 1 write"));
    t.keys(&["Escape"]);

    // Now the half-done rename is the worst.
    t.wait("the rename on top", |s| {
        top_row(s).contains("demo-rename-half-done") && top_row(s).contains('E')
    });
    t.keys(&["a"]);
    t.wait("the action menu", |s| {
        s.contains("actions ·") && s.contains("resume-rename")
    });
    t.keys(&["Enter"]);
    t.wait("the resume-rename plan", |s| {
        s.contains("Type vm-disk-data-orig-de3e to confirm") && s.contains("permitted")
    });
    t.run(&["send-keys", "-t", "e2e", "-l", "vm-disk-data-orig-de3e"]);
    t.keys(&["Enter"]);
    t.wait("the rename finished", |s| s.contains("completed: 2 writes"));
    t.keys(&["Escape"]);

    // The simulation's restores go on and complete, with no error left.
    let s = t.wait("both restores Succeeded", |s| {
        s.lines()
            .filter(|l| l.contains("restore-") && l.contains("Succeeded"))
            .count()
            == 2
    });
    assert!(
        s.lines()
            .filter(|l| l.contains("restore-"))
            .all(|l| !l.contains('E')),
        "no error badge left:\n{s}"
    );
    let audit = std::fs::read_to_string(state.join("restorewatch/audit.jsonl"))
        .expect("the audit log exists");
    assert_eq!(
        audit.lines().count(),
        3,
        "one audit line per write:\n{audit}"
    );
    t.keys(&["q"]);
}

#[test]
fn a_crash_leaves_a_usable_terminal_and_names_the_log() {
    let t = Tmux::start(
        "panic",
        "demo --scenario vm-healthy",
        "export RESTOREWATCH_DEBUG_PANIC=1;",
        SHELL_AFTER,
    );
    t.wait("the shell after the crash", |s| s.contains("STTY-DONE"));
    let s = t.history();
    assert!(
        s.contains("RESTOREWATCH_DEBUG_PANIC is set"),
        "the panic message is shown:\n{s}"
    );
    assert!(
        s.contains("the log is at") && s.contains("restorewatch.log"),
        "the log is named:\n{s}"
    );
    assert!(!s.contains("EXIT=0"), "a crash is not a success:\n{s}");
    assert!(
        s.lines().any(|l| l.trim() == "icanon"),
        "the terminal is back in canonical mode:\n{s}"
    );
}

impl Tmux {
    /// The pid of the program the pane's shell is running.
    fn program_pid(&self) -> u32 {
        let shell = self.run(&["display-message", "-p", "-t", "e2e", "#{pane_pid}"]);
        let shell = shell.trim();
        let start = Instant::now();
        loop {
            let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children"))
                .unwrap_or_default();
            if let Some(pid) = children.split_whitespace().next() {
                return pid.parse().expect("a pid");
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "the shell {shell} runs no program"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// What the terminal is doing: alternate screen, cursor shown, any mouse mode.
    fn modes(&self) -> String {
        self.run(&[
            "display-message",
            "-p",
            "-t",
            "e2e",
            "alt=#{alternate_on} cursor=#{cursor_flag} mouse=#{mouse_any_flag}#{mouse_button_flag}#{mouse_standard_flag}#{mouse_all_flag}",
        ])
        .trim()
        .to_string()
    }
}

/// Issue 10, point 3: a signal from outside (a supervisor's SIGTERM, a dropped ssh session's
/// SIGHUP, SIGQUIT, a `kill -INT`) leaves the terminal as it was found, under a plain `sh`
/// where nothing else would repair it, and the exit status says which signal it was.
#[test]
fn a_signal_leaves_the_terminal_as_it_was_found() {
    let dump = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/incident/monday-morning.yaml"
    );
    for (name, signo) in [("TERM", 15), ("HUP", 1), ("QUIT", 3), ("INT", 2)] {
        let t = Tmux::start(
            &format!("sig{name}"),
            &format!("--snapshot {dump} --now 2026-11-20T10:30:00Z"),
            "echo BEFORE-DASHBOARD;",
            "echo EXIT=$?; stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e -icanon -e echo -e -echo; echo STTY-DONE; sleep 60",
        );
        t.wait("the dashboard", |s| s.contains("restores["));
        let during = t.modes();
        assert!(
            during.starts_with("alt=1"),
            "SIG{name}: the dashboard is on the alternate screen: {during}"
        );
        let pid = t.program_pid();
        let sent = Command::new("kill")
            .args([&format!("-{name}"), &pid.to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success(), "SIG{name} sent to {pid}");
        let s = t.wait("the shell after the signal", |s| s.contains("STTY-DONE"));
        assert!(
            s.contains(&format!("EXIT={}", 128 + signo)),
            "SIG{name}: exit status 128+{signo}:\n{s}"
        );
        let lines: Vec<&str> = s.lines().map(str::trim).collect();
        assert!(
            lines.contains(&"icanon") && lines.contains(&"echo"),
            "SIG{name}: the terminal is back in cooked mode with echo:\n{s}"
        );
        assert!(
            s.contains("BEFORE-DASHBOARD"),
            "SIG{name}: the shell's screen is back:\n{s}"
        );
        assert_eq!(
            t.modes(),
            "alt=0 cursor=1 mouse=0000",
            "SIG{name}: main screen, cursor shown, no mouse capture"
        );
    }
}

/// Issue 10, point 8: the log quotes cluster errors and names; it is 0600 in a 0700 folder, and
/// one an older version left world-readable is tightened (and the log says so).
#[test]
fn the_dashboard_log_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dump = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/incident/monday-morning.yaml"
    );
    for existing in [false, true] {
        let home = tempfile::tempdir().expect("temp dir");
        let log = home.path().join("state/restorewatch/restorewatch.log");
        if existing {
            std::fs::create_dir_all(log.parent().unwrap()).unwrap();
            std::fs::write(&log, "an older session\n").unwrap();
            std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        let t = Tmux::start_in(
            home,
            &format!("log{existing}"),
            &format!("--snapshot {dump}"),
            "",
            "sleep 60",
        );
        t.wait("the dashboard", |s| s.contains("restores["));
        assert_eq!(mode(&log), 0o600, "the log (existing before: {existing})");
        if !existing {
            assert_eq!(mode(log.parent().unwrap()), 0o700, "the state folder");
        } else {
            let text = std::fs::read_to_string(&log).unwrap();
            assert!(
                text.contains("now 0600"),
                "the log says it was tightened:\n{text}"
            );
        }
        t.keys(&["q"]);
    }
}

/// An emulator in its own process (`sim serve`), as a second cluster would be.
struct SimProcess {
    child: std::process::Child,
    server: String,
}

impl SimProcess {
    fn start(scenario: &str, dir: &std::path::Path) -> SimProcess {
        SimProcess::serve(
            &["--scenario", scenario],
            &dir.join(format!("{scenario}.kubeconfig")),
        )
    }

    /// `sim serve --load DUMP`: these objects as dumped, nothing played on them.
    fn load(dump: &std::path::Path, kc: &std::path::Path) -> SimProcess {
        let dump = dump.display().to_string();
        SimProcess::serve(&["--load", &dump], kc)
    }

    fn serve(args: &[&str], kc: &std::path::Path) -> SimProcess {
        let bin = std::env::var("RESTOREWATCH_E2E_BIN")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_restorewatch").to_string());
        let kc = kc.to_path_buf();
        let child = Command::new(bin)
            .args(["sim", "serve", "--port", "0"])
            .args(args)
            .arg("--write-kubeconfig")
            .arg(&kc)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("sim serve");
        let start = Instant::now();
        let server = loop {
            let text = std::fs::read_to_string(&kc).unwrap_or_default();
            if let Some(url) = text.lines().find_map(|l| l.trim().strip_prefix("server: ")) {
                break url.trim_matches('"').to_string();
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "sim serve wrote no kubeconfig"
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        SimProcess { child, server }
    }
}

impl Drop for SimProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `:ctx` in the real terminal loop: two clusters in one kubeconfig, completion, the switch
/// in place, and the header naming the context shown.
#[test]
fn ctx_switches_between_two_clusters_in_place() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = SimProcess::start("vm-healthy", dir.path());
    let b = SimProcess::start("pg-healthy", dir.path());
    let kc = dir.path().join("two-contexts");
    let mut text = String::from("apiVersion: v1\nkind: Config\nclusters:\n");
    for (name, sim) in [("alpha", &a), ("beta", &b)] {
        text.push_str(&format!(
            "- name: {name}\n  cluster:\n    server: {}\n",
            sim.server
        ));
    }
    text.push_str("users:\n- name: op\n  user: {}\ncontexts:\n");
    for name in ["alpha", "beta"] {
        text.push_str(&format!(
            "- name: {name}\n  context:\n    cluster: {name}\n    user: op\n"
        ));
    }
    text.push_str("current-context: alpha\n");
    std::fs::write(&kc, text).expect("kubeconfig");

    let t = Tmux::start(
        "ctx",
        &format!("--readonly --kubeconfig {}", kc.display()),
        "",
        "sleep 60",
    );
    t.wait("alpha's restore", |s| {
        s.contains("ctx alpha") && s.contains("restore-test")
    });
    t.keys(&[":"]);
    t.run(&["send-keys", "-t", "e2e", "-l", "ctx b"]);
    t.keys(&["Tab"]);
    t.wait("the completed name", |s| s.contains(":ctx beta"));
    t.keys(&["Enter"]);
    let s = t.wait("beta's restore", |s| {
        s.contains("ctx beta") && s.contains("restore-pg1")
    });
    assert!(
        !s.contains("restore-test"),
        "nothing of alpha is left on screen:\n{s}"
    );
    assert!(s.contains("context beta (was alpha)"), "{s}");
    t.keys(&["q"]);
}

/// Waits (bounded) for process `pid` to be gone; fails saying how much CPU it burnt meanwhile.
fn wait_gone(pid: u32, what: &str) {
    let stat = || std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
    // utime + stime in clock ticks, after the command name (which may hold spaces).
    let ticks = |s: &str| -> u64 {
        let f: Vec<&str> = s
            .rsplit_once(')')
            .map_or("", |(_, r)| r)
            .split_whitespace()
            .collect();
        f.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
            + f.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
    };
    let first = stat().map(|s| ticks(&s)).unwrap_or(0);
    let start = Instant::now();
    loop {
        match stat() {
            None => return,
            // A zombie has ended; only its parent has not reaped it yet.
            Some(s)
                if s.rsplit_once(')')
                    .is_some_and(|(_, r)| r.trim_start().starts_with('Z')) =>
            {
                return;
            }
            Some(s) => assert!(
                start.elapsed() < Duration::from_secs(30),
                "{what}: the dashboard ({pid}) still runs after 30 s, {} s of CPU burnt meanwhile",
                (ticks(&s) - first) / 100
            ),
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Runs the dashboard (`args`) in tmux through `sh -c WRAPPER`, where `WRAPPER` (built by
/// `wrap` from the command line) outlives the terminal and writes the exit status to a file;
/// kills tmux once `ready` is on screen; returns the exit status.
fn status_after_the_terminal_goes(
    name: &str,
    args: &str,
    ready: &str,
    wrap: impl Fn(&str, &std::path::Path) -> String,
) -> String {
    let home = tempfile::tempdir().expect("temp dir");
    let status = home.path().join("status");
    let bin = std::env::var("RESTOREWATCH_E2E_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_restorewatch").to_string());
    let command = format!(
        "XDG_STATE_HOME={} XDG_CONFIG_HOME={} {bin} {args}",
        home.path().join("state").display(),
        home.path().join("config").display()
    );
    let script = wrap(&command, &status);
    let t = Tmux::start_script(home, name, &script);
    t.wait(ready, |s| s.contains(ready));
    let pid = t.program_pid();
    t.run(&["kill-server"]);
    wait_gone(pid, name);
    let start = Instant::now();
    loop {
        if let Ok(s) = std::fs::read_to_string(&status)
            && !s.trim().is_empty()
        {
            return s.trim().to_string();
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{name}: no exit status written"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Issue 18, point 12: the terminal going away (a window closed, ssh dropped, tmux killed) ends
/// the dashboard on a live cluster with 129, also when no SIGHUP comes (here: another
/// session, so only the terminal's end tells); it used to spin on `read(0) = 0` and, once it
/// ended, abort writing to the dead terminal (134).
#[test]
fn the_dashboard_ends_when_its_terminal_goes_away() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sim = SimProcess::start("vm-healthy", dir.path());
    let kc = dir.path().join("vm-healthy.kubeconfig");
    let status = status_after_the_terminal_goes(
        "gone",
        &format!("--kubeconfig {}", kc.display()),
        "restore-test",
        |cmd, status| {
            format!(
                "setsid sh -c '{cmd}; echo $? > {}'; sleep 60",
                status.display()
            )
        },
    );
    assert_eq!(status, "129", "the exit status of a terminal gone");
    drop(sim);
}

/// Issue 18, point 12: with stdin at its end (`</dev/null`, the keys come from /dev/tty), a
/// terminal that closes ends the demo with 129 too (the shell around it ignores SIGHUP to
/// live on and tell).
#[test]
fn the_demo_with_stdin_at_eof_ends_when_its_terminal_closes() {
    let status = status_after_the_terminal_goes(
        "eof",
        "demo --scenario vm-healthy </dev/null",
        "restores[",
        |cmd, status| {
            format!(
                "trap '' HUP; {cmd}; echo $? > {}; sleep 60",
                status.display()
            )
        },
    );
    assert_eq!(status, "129", "the exit status of a terminal gone");
}

/// Issue 18, point 12: a signal ends the dashboard even while a frame takes long (a stand-in
/// switch makes the first frame never end), with the signal's status and the terminal back.
#[test]
fn a_signal_ends_the_dashboard_in_the_middle_of_a_frame() {
    let t = Tmux::start(
        "busy",
        "demo --scenario vm-healthy",
        "export RESTOREWATCH_DEBUG_BUSY=1;",
        SHELL_AFTER,
    );
    t.wait("the first frame", |s| s.contains("restores["));
    let pid = t.program_pid();
    let sent = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success(), "SIGTERM sent to {pid}");
    let s = t.wait("the shell after the signal", |s| s.contains("STTY-DONE"));
    assert!(s.contains("EXIT=143"), "exit status 128+15:\n{s}");
    assert!(
        s.lines().any(|l| l.trim() == "icanon"),
        "the terminal is back in canonical mode:\n{s}"
    );
}

/// A VM whose restore failed (its `-orig` name was taken), its Backup and its disk, as a
/// cluster dump.
fn failed_vm_restore_dump() -> serde_json::Value {
    let ns = "tenant-a";
    let pvc_uid = "8fe8d0ce-0000-4000-8000-000000000002";
    serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "replicated"},
         "provisioner": "linstor.csi.linbit.com", "reclaimPolicy": "Delete"},
        {"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "Backup",
         "metadata": {"name": "vm1-backup", "namespace": ns, "creationTimestamp": "2026-11-20T02:00:00Z"},
         "spec": {"applicationRef": {"apiGroup": "apps.cozystack.io", "kind": "VMInstance", "name": "vm1"},
                  "strategyRef": {"apiGroup": "strategy.backups.cozystack.io", "kind": "Velero", "name": "velero"}},
         "status": {"underlyingResources": {"dataVolumes": [{"dataVolumeName": "vm-disk-data", "applicationName": "data"}]}}},
        {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "vm-instance-vm1", "namespace": ns},
         "spec": {"runStrategy": "Halted", "template": {"spec": {"volumes": [
             {"name": "data", "persistentVolumeClaim": {"claimName": "vm-disk-data"}}]}}}},
        {"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": {"name": "vm-disk-data", "namespace": ns},
         "spec": {"storage": {"resources": {"requests": {"storage": "10Gi"}}}}, "status": {"phase": "Succeeded"}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": "vm-disk-data", "namespace": ns, "uid": pvc_uid, "creationTimestamp": "2026-09-21T10:00:00Z"},
         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}},
                  "storageClassName": "replicated", "volumeMode": "Block", "volumeName": "pv-data"},
         "status": {"phase": "Bound", "capacity": {"storage": "10Gi"}}},
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-data", "creationTimestamp": "2026-09-21T10:00:00Z"},
         "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "persistentVolumeReclaimPolicy": "Delete",
                  "storageClassName": "replicated", "volumeMode": "Block",
                  "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": ns, "name": "vm-disk-data", "uid": pvc_uid}},
         "status": {"phase": "Bound"}},
        {"apiVersion": "backups.cozystack.io/v1alpha1", "kind": "RestoreJob",
         "metadata": {"name": "restore-test", "namespace": ns, "uid": "5c96b3b8-0000-4000-8000-000000000001",
                      "creationTimestamp": "2026-11-20T10:00:00Z"},
         "spec": {"backupRef": {"name": "vm1-backup"},
                  "targetApplicationRef": {"apiGroup": "apps.cozystack.io", "kind": "VMInstance", "name": "vm1"},
                  "options": {"keepOriginalPVC": true}},
         "status": {"phase": "Failed", "startedAt": "2026-11-20T10:00:01Z", "completedAt": "2026-11-20T10:00:05Z",
                    "message": "RestoreJob failed: -orig PVC vm-disk-data-orig-de3e exists and was not created by this RestoreJob"}}
    ]})
}

/// Before restoring: `:backups`, `a` on the Backup shows the preflight of a restore from it and
/// the manifest; then a failed restore is restarted from the dashboard, the plan showing the new
/// name's preflight, confirmed by typing the name, and kubectl sees the new RestoreJob.
#[test]
fn an_operator_preflights_a_backup_and_restarts_a_failed_restore() {
    let dir = tempfile::tempdir().expect("temp dir");
    let dump = dir.path().join("dump.json");
    std::fs::write(&dump, failed_vm_restore_dump().to_string()).expect("dump");
    let kc = dir.path().join("kubeconfig");
    let _sim = SimProcess::load(&dump, &kc);
    let t = Tmux::start(
        "preflight",
        &format!("--kubeconfig {}", kc.display()),
        "",
        "sleep 60",
    );
    t.wait("the failed restore", |s| {
        s.contains("restore-test") && s.contains("Failed")
    });

    t.keys(&[":"]);
    t.run(&["send-keys", "-t", "e2e", "-l", "backups"]);
    t.keys(&["Enter"]);
    t.wait("the Backup listed", |s| {
        s.contains("backups[1]") && s.contains("vm1-backup") && s.contains("VMInstance/vm1")
    });
    t.keys(&["a"]);
    let fresh = restorewatch::model::names::orig_pvc_name("vm-disk-data", "restore-vm1-backup");
    let s = t.wait("the preflight verdict", |s| s.contains("verdict:"));
    assert!(
        s.contains(&format!("vm-disk-data -> {fresh}: free")),
        "the disk's -orig name is predicted free:\n{s}"
    );
    assert!(
        s.contains("verdict: nothing found that would lose or hide data"),
        "{s}"
    );
    assert!(
        s.contains("manifest to apply") && s.contains("\"name\": \"restore-vm1-backup\""),
        "{s}"
    );

    // Back to the restores; `a` on the failed one offers the restart.
    t.keys(&["Escape", ":"]);
    t.run(&["send-keys", "-t", "e2e", "-l", "restores"]);
    t.keys(&["Enter", "a"]);
    let menu = t.wait("the action menu", |s| s.contains("restart-restore"));
    let pick = menu
        .lines()
        .find(|l| l.contains("restart-restore"))
        .and_then(|l| l.chars().find(|c| c.is_ascii_digit()))
        .expect("the menu numbers restart-restore")
        .to_string();
    t.keys(&[&pick]);
    let r2_orig = restorewatch::model::names::orig_pvc_name("vm-disk-data", "restore-test-r2");
    t.wait("the restart plan with its preflight", |s| {
        s.contains("create RestoreJob tenant-a/restore-test-r2")
            && s.contains(&format!("preflight: vm-disk-data kept as {r2_orig}"))
            && s.contains("Type restore-test to confirm")
            && s.contains("permitted")
    });
    // Enter alone never confirms.
    t.keys(&["Enter"]);
    assert!(!t.screen().contains("completed"), "{}", t.screen());
    t.run(&["send-keys", "-t", "e2e", "-l", "restore-test"]);
    t.keys(&["Enter"]);
    t.wait("the restart done", |s| s.contains("completed: 1 write"));
    t.keys(&["Escape"]);
    t.wait("the new RestoreJob listed", |s| {
        s.contains("restore-test-r2")
    });

    let out = Command::new("kubectl")
        .args(["--kubeconfig", &kc.display().to_string()])
        .args(["get", "restorejob", "restore-test-r2", "-n", "tenant-a", "-o"])
        .arg("jsonpath={.spec.backupRef.name} {.metadata.annotations.restorewatch\\.io/restarted-from}")
        .output()
        .expect("kubectl");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "vm1-backup 5c96b3b8-0000-4000-8000-000000000001",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    t.keys(&["q"]);
}

/// Issue 27, point 9: an exec credential plugin the dashboard waits for (a `:ctx` to a context
/// whose login hangs) is killed with what it started when the wait is abandoned: by a `:ctx`
/// back to another context, and by quitting. The plugin records its pid and its child's.
#[test]
fn an_abandoned_ctx_switch_leaves_no_exec_plugin_running() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = SimProcess::start("vm-healthy", dir.path());
    let pids = dir.path().join("plugin.pids");
    let script = dir.path().join("plugin.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nsleep 300 &\necho \"$$ $!\" > {p}.tmp\nmv {p}.tmp {p}\nwait\n",
            p = pids.display()
        ),
    )
    .expect("script");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let kc = dir.path().join("kubeconfig");
    std::fs::write(
        &kc,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: alpha\n  cluster: {{server: \"{}\"}}\n- name: slow\n  cluster: {{server: \"http://127.0.0.1:9\"}}\nusers:\n- name: op\n  user: {{}}\n- name: sso\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      interactiveMode: Never\ncontexts:\n- name: alpha\n  context: {{cluster: alpha, user: op}}\n- name: slow\n  context: {{cluster: slow, user: sso}}\ncurrent-context: alpha\n",
            a.server,
            script.display()
        ),
    )
    .expect("kubeconfig");
    let plugin = || -> Vec<u32> {
        let start = Instant::now();
        loop {
            let text = std::fs::read_to_string(&pids).unwrap_or_default();
            let v: Vec<u32> = text
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect();
            if v.len() == 2 {
                return v;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the plugin never started"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let gone = |v: &[u32], what: &str| {
        let start = Instant::now();
        let running = |p: &u32| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .is_some_and(|s| {
                    !s.rsplit_once(')')
                        .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
                })
        };
        while v.iter().any(running) {
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "{what}: the plugin {v:?} still runs"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let t = Tmux::start(
        "plugin",
        &format!("--readonly --kubeconfig {}", kc.display()),
        "",
        SHELL_AFTER,
    );
    t.wait("alpha's restore", |s| {
        s.contains("ctx alpha") && s.contains("restore-test")
    });
    t.keys(&[":"]);
    t.run(&["send-keys", "-t", "e2e", "-l", "ctx slow"]);
    t.keys(&["Enter"]);
    let first = plugin();
    // Switching away while the login hangs abandons it.
    t.keys(&[":"]);
    t.run(&["send-keys", "-t", "e2e", "-l", "ctx alpha"]);
    t.keys(&["Enter"]);
    gone(&first, ":ctx away from a hanging login");
    std::fs::remove_file(&pids).expect("pid file");
    t.keys(&[":"]);
    t.run(&["send-keys", "-t", "e2e", "-l", "ctx slow"]);
    t.keys(&["Enter"]);
    let second = plugin();
    t.keys(&["q"]);
    t.wait("the shell after the dashboard", |s| s.contains("STTY-DONE"));
    gone(&second, "quitting while a login hangs");
}

/// The report export (`e`) on a failed restore, at a fixed `--now`: the file names it can pick
/// in the next ten minutes, each a planted symlink to a victim file.
fn export_setup(home: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf, String) {
    let dump = home.join("dump.json");
    std::fs::write(&dump, failed_vm_restore_dump().to_string()).expect("dump");
    let reports = home.join("state/restorewatch/reports");
    std::fs::create_dir_all(&reports).expect("reports folder");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        home.join("state/restorewatch"),
        std::fs::Permissions::from_mode(0o700),
    )
    .expect("chmod");
    std::fs::set_permissions(&reports, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let now = "2026-11-20T10:30:00Z";
    let args = format!("--snapshot {} --now {now}", dump.display());
    (reports, dump, args)
}

/// Issue 27, point 8: `e` never follows a planted symlink (the victim keeps its content and
/// mode, the report goes to a fresh name) and refuses a reports folder others may write.
#[test]
fn the_report_export_follows_no_symlink_and_refuses_a_shared_folder() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().expect("temp dir");
    let (reports, _dump, args) = export_setup(home.path());
    let victim = home.path().join("victim.txt");
    std::fs::write(&victim, "precious\n").expect("victim");
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let start: jiff::Timestamp = "2026-11-20T10:30:00Z".parse().expect("time");
    for s in 0..600 {
        let at = start
            .checked_add(jiff::SignedDuration::from_secs(s))
            .expect("time");
        let name = format!("{}-tenant-a_restore-test.md", at.strftime("%Y%m%dT%H%M%SZ"));
        std::os::unix::fs::symlink(&victim, reports.join(name)).expect("symlink");
    }
    std::fs::set_permissions(&reports, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let t = Tmux::start_in(home, "export", &args, "", "sleep 60");
    t.wait("the failed restore", |s| {
        s.contains("restore-test") && s.contains("Failed")
    });
    t.keys(&["e"]);
    let s = t.wait("the refusal", |s| s.contains("writable by others"));
    assert!(!s.contains("written to"), "{s}");
    std::fs::set_permissions(&reports, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    t.keys(&["e"]);
    let s = t.wait("the export", |s| s.contains("written to"));
    assert_eq!(
        std::fs::read_to_string(&victim).expect("victim"),
        "precious\n",
        "{s}"
    );
    assert_eq!(
        std::fs::metadata(&victim)
            .expect("victim")
            .permissions()
            .mode()
            & 0o777,
        0o644
    );
    let written: Vec<_> = std::fs::read_dir(&reports)
        .expect("reports")
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .collect();
    assert_eq!(written.len(), 1, "{written:?}");
    let report = std::fs::read_to_string(&written[0]).expect("report");
    assert!(report.contains("restore-test"), "{report}");
    assert_eq!(
        std::fs::metadata(&written[0])
            .expect("report")
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    t.keys(&["q"]);
}

/// Issue 27, point 8: a write that fails part-way (here the file size limit, as a full disk
/// would) leaves no cut file behind, and says so.
#[test]
fn a_failed_report_export_leaves_no_partial_file() {
    let home = tempfile::tempdir().expect("temp dir");
    let (reports, _dump, args) = export_setup(home.path());
    // 1 block: the report (several KiB) cannot fit; SIGXFSZ ignored, so the write fails instead.
    let t = Tmux::start_in(
        home,
        "export-full",
        &args,
        "trap '' XFSZ; ulimit -f 1;",
        "sleep 60",
    );
    t.wait("the failed restore", |s| {
        s.contains("restore-test") && s.contains("Failed")
    });
    t.keys(&["e"]);
    let s = t.wait("the failure", |s| s.contains("cannot write"));
    let left: Vec<_> = std::fs::read_dir(&reports)
        .expect("reports")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "a cut file was left: {left:?}\n{s}");
    t.keys(&["q"]);
}

/// Issue 27, point 9: a SIGINT (Ctrl-C) while the dashboard waits for its first context's exec plugin (the
/// terminal not yet the dashboard's: the SIGINT goes to restorewatch's process group, not the
/// plugin's) ends the wait and kills the plugin.
#[test]
fn ctrl_c_while_the_first_login_hangs_leaves_no_exec_plugin_running() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pids = dir.path().join("plugin.pids");
    let script = dir.path().join("plugin.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nsleep 300 &\necho \"$$ $!\" > {p}.tmp\nmv {p}.tmp {p}\nwait\n",
            p = pids.display()
        ),
    )
    .expect("script");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let kc = dir.path().join("kubeconfig");
    std::fs::write(
        &kc,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: slow\n  cluster: {{server: \"http://127.0.0.1:9\"}}\nusers:\n- name: sso\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      interactiveMode: Never\ncontexts:\n- name: slow\n  context: {{cluster: slow, user: sso}}\ncurrent-context: slow\n",
            script.display()
        ),
    )
    .expect("kubeconfig");
    let t = Tmux::start(
        "plugin-first",
        &format!("--kubeconfig {}", kc.display()),
        "",
        SHELL_AFTER,
    );
    let start = Instant::now();
    let v: Vec<u32> = loop {
        let text = std::fs::read_to_string(&pids).unwrap_or_default();
        let v: Vec<u32> = text
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        if v.len() == 2 {
            break v;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the plugin never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    // What a Ctrl-C sends restorewatch (sent to it alone: a plain `sh` would end on its own
    // SIGINT before saying the exit status).
    let rw = t.program_pid();
    let kill = Command::new("kill")
        .args(["-INT", &rw.to_string()])
        .status()
        .expect("kill");
    assert!(kill.success());
    let s = t.wait("the shell after restorewatch", |s| s.contains("STTY-DONE"));
    assert!(s.contains("EXIT=130"), "{s}");
    let start = Instant::now();
    let running = |p: &u32| {
        std::fs::read_to_string(format!("/proc/{p}/stat"))
            .ok()
            .is_some_and(|s| {
                !s.rsplit_once(')')
                    .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
            })
    };
    while v.iter().any(running) {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "the plugin {v:?} outlived restorewatch"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
