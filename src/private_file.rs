//! Files only their owner may read: the log (it quotes cluster errors and object names), the
//! audit of actions (who changed what, on which cluster) and a kubeconfig (a bearer token).
//! Created 0600 in a 0700 folder; a file that already exists with a wider mode is tightened,
//! and when that is not possible the caller is told so it can warn.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// A file opened for appending (created when missing), with what had to be done to its mode.
pub struct Opened {
    pub file: File,
    /// Set when the file was readable by others: `tightened` or why it could not be.
    pub notice: Option<String>,
}

/// Creates `dir` (and its parents) when missing; a folder created here is 0700.
pub fn create_dir(dir: &Path) -> io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
}

fn options() -> OpenOptions {
    let mut o = OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    o
}

/// Makes an open file 0600 when others may read or write it.
#[cfg(unix)]
fn tighten(file: &File, path: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = match file.metadata() {
        Ok(m) => m.permissions().mode() & 0o777,
        Err(e) => return Some(format!("cannot read the mode of {}: {e}", path.display())),
    };
    if mode & 0o077 == 0 {
        return None;
    }
    Some(
        match file.set_permissions(std::fs::Permissions::from_mode(0o600)) {
            Ok(()) => format!(
                "{} was readable by others (mode {mode:03o}); it is now 0600",
                path.display()
            ),
            Err(e) => format!(
                "{} is readable by others (mode {mode:03o}) and could not be made 0600: {e}",
                path.display()
            ),
        },
    )
}

#[cfg(not(unix))]
fn tighten(_file: &File, _path: &Path) -> Option<String> {
    None
}

/// Opens `path` for appending, creating it 0600 (and its folder 0700).
pub fn open_append(path: &Path) -> io::Result<Opened> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_dir(dir)?;
    }
    let file = options().create(true).append(true).open(path)?;
    let notice = tighten(&file, path);
    Ok(Opened { file, notice })
}

/// Writes `contents` to `path`, replacing what was there; the file is 0600 whether it is new or
/// not, and is tightened before anything is written into it.
pub fn write(path: &Path, contents: &[u8]) -> io::Result<Option<String>> {
    use std::io::Write;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_dir(dir)?;
    }
    let mut file = options()
        .create(true)
        .write(true)
        .truncate(true)
        .open(path)?;
    let notice = tighten(&file, path);
    file.write_all(contents)?;
    Ok(notice)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn new_files_are_0600_in_a_0700_folder() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("state/restorewatch/x.log");
        let o = open_append(&log).unwrap();
        assert!(o.notice.is_none());
        assert_eq!(mode(&log), 0o600);
        assert_eq!(mode(log.parent().unwrap()), 0o700);
        let kc = d.path().join("kc/config");
        assert_eq!(write(&kc, b"x").unwrap(), None);
        assert_eq!(mode(&kc), 0o600);
    }

    #[test]
    fn an_existing_wider_file_is_tightened_and_said_so() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("audit.jsonl");
        std::fs::write(&p, "old\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        let o = open_append(&p).unwrap();
        assert!(o.notice.unwrap().contains("now 0600"));
        assert_eq!(mode(&p), 0o600);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(write(&p, b"new").unwrap().unwrap().contains("mode 666"));
        assert_eq!(mode(&p), 0o600);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
    }
}
