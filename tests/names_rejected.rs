//! Names and namespaces the API server would refuse are refused by the real binary with exit 2
//! and a clear message, BEFORE any request: the kubeconfig points at a listener that no test
//! command may connect to (a connection would sit in its backlog, so checking it after each
//! command is deterministic). And `preflight -f -` stops reading at a manifest's size.

use std::io::Write;
use std::net::TcpListener;
use std::process::{Command, Stdio};

const HOSTILE_NS: &str = "tenant-a/../../../api/v1/namespaces/kube-system/secrets?limit=1#";

struct Tripwire {
    listener: TcpListener,
    dir: tempfile::TempDir,
}

impl Tripwire {
    fn new() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().expect("addr").port();
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("kubeconfig"),
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: \"http://127.0.0.1:{port}\"}}\nusers:\n- name: u\n  user: {{token: t}}\ncontexts:\n- name: x\n  context: {{cluster: c, user: u, namespace: tenant-a}}\ncurrent-context: x\n"
            ),
        )
        .expect("kubeconfig");
        Tripwire { listener, dir }
    }

    /// Runs the binary with `args` (and `stdin`), asserts exit 2, a message naming `said`, and
    /// that nothing connected to the cluster.
    fn refused(&self, args: &[&str], stdin: Option<Vec<u8>>, said: &str) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_restorewatch"))
            .args(args)
            .arg("--kubeconfig")
            .arg(self.dir.path().join("kubeconfig"))
            .env("XDG_STATE_HOME", self.dir.path())
            .env("NO_COLOR", "1")
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("runs");
        if let Some(bytes) = stdin {
            let mut w = child.stdin.take().expect("stdin");
            // The binary may stop reading early (that is the point): a broken pipe is fine.
            let _ = w.write_all(&bytes);
        }
        let out = child.wait_with_output().expect("waits");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {err}\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(err.contains(said), "{args:?}: {err}");
        match self.listener.accept() {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            other => panic!("{args:?} reached the API server: {other:?}"),
        }
    }
}

#[test]
fn hostile_names_are_refused_before_any_request() {
    let t = Tripwire::new();
    let long = "a".repeat(300);
    let app = ["--app", "VMInstance/vm1", "--backup", "vm1-backup"];
    t.refused(&["check", "-n", HOSTILE_NS], None, "the namespace");
    t.refused(
        &["check", "-n", "tenant-a/../x"],
        None,
        "not a valid DNS label",
    );
    for name in ["a/b", "../x", "UPPER", long.as_str()] {
        let mut args = vec!["preflight", "-n", "tenant-a"];
        args.extend(app);
        args.extend(["--name", name]);
        t.refused(&args, None, "--name");
    }
    t.refused(
        &[
            "preflight",
            "--app",
            "VMInstance/../vm1",
            "--backup",
            "b",
            "--name",
            "r",
        ],
        None,
        "--app's NAME",
    );
    t.refused(
        &[
            "action",
            "reclaim-orig",
            "--pvc",
            &format!("{HOSTILE_NS}/x"),
        ],
        None,
        "is not a valid name",
    );
    t.refused(
        &["action", "resume-rename", "--restore", "tenant-a/UPPER"],
        None,
        "is not a valid name",
    );
    t.refused(&["report", "tenant-a/a_b"], None, "the RestoreJob name");
    let manifest = format!(
        "apiVersion: backups.cozystack.io/v1alpha1\nkind: RestoreJob\nmetadata:\n  name: restore-2\n  namespace: \"{HOSTILE_NS}\"\nspec:\n  backupRef: {{name: vm1-backup}}\n  targetApplicationRef: {{apiGroup: apps.cozystack.io, kind: VMInstance, name: vm1}}\n"
    );
    t.refused(
        &["preflight", "-f", "-"],
        Some(manifest.clone().into_bytes()),
        "the RestoreJob's namespace",
    );
    // A valid manifest behind 8 MiB of comments: no manifest is that large; refused unread.
    let mut big = "# padding padding padding padding padding padding padding padding\n"
        .repeat(8 << 20 >> 6)
        .into_bytes();
    big.extend(manifest.replace(HOSTILE_NS, "tenant-a").into_bytes());
    t.refused(&["preflight", "-f", "-"], Some(big), "larger than");
}
