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

/// Refuses a folder that anyone but the user may write into (or that is not the user's): there
/// another user can plant a symlink or a file of the name about to be written, or swap what was
/// written for something else after the status line said where it is.
#[cfg(unix)]
pub fn check_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(dir)?;
    let refuse = |why: String| Err(io::Error::new(io::ErrorKind::PermissionDenied, why));
    if !m.is_dir() {
        return refuse("it is not a folder (a symlink?)".into());
    }
    // SAFETY: geteuid takes nothing, touches no memory and cannot fail.
    let me = unsafe { libc::geteuid() };
    if m.uid() != me {
        return refuse(format!(
            "the folder belongs to uid {}, not to you (uid {me}): refusing to write into it",
            m.uid()
        ));
    }
    let mode = m.mode() & 0o777;
    if mode & 0o022 != 0 {
        return refuse(format!(
            "the folder is writable by others (mode {mode:03o}): refusing to write into it; `chmod go-w` it"
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
pub fn check_private_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}

/// Creates a NEW private file in `dir` holding `contents` and returns its path: never follows a
/// symlink, never opens what exists (the name is `name`, else `stem-1.ext`, `stem-2.ext`... the
/// first free one), refuses a folder others may write (`check_private_dir`), and removes what it
/// created when the write fails (a full disk must not leave a 0-byte or cut file behind).
pub fn create_new(
    dir: &Path,
    name: &str,
    contents: &[u8],
) -> io::Result<(std::path::PathBuf, Option<String>)> {
    create_new_with(dir, name, |f| {
        use std::io::Write;
        f.write_all(contents)?;
        f.sync_all()
    })
}

/// `create_new` with the writing done by `write` (tests inject a failing one).
pub fn create_new_with(
    dir: &Path,
    name: &str,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<(std::path::PathBuf, Option<String>)> {
    create_dir(dir)?;
    check_private_dir(dir)?;
    let (stem, ext) = match name.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s, format!(".{e}")),
        _ => (name, String::new()),
    };
    let mut o = options();
    o.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut o, libc::O_NOFOLLOW);
    for n in 0..100u32 {
        let path = if n == 0 {
            dir.join(name)
        } else {
            dir.join(format!("{stem}-{n}{ext}"))
        };
        let mut file = match o.open(&path) {
            Ok(f) => f,
            // A file, a folder or a symlink of that name: left alone, the next name is tried.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        };
        // Created here with 0600, but a umask cannot widen it; said if something did.
        let notice = tighten(&file, &path);
        if let Err(e) = write(&mut file) {
            drop(file);
            // The folder is the user's alone (checked above): the name is still what was created.
            let _ = std::fs::remove_file(&path);
            return Err(e);
        }
        return Ok((path, notice));
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!(
            "{} and 99 other names like it exist in {}",
            name,
            dir.display()
        ),
    ))
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

    #[test]
    fn a_new_file_never_follows_a_symlink_nor_survives_a_failed_write() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("reports");
        create_dir(&dir).unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("r.md")).unwrap();
        let (path, _) = create_new(&dir, "r.md", b"report").unwrap();
        assert_eq!(path, dir.join("r-1.md"));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        let failed = create_new_with(&dir, "s.md", |f| {
            use std::io::Write;
            f.write_all(b"half")?;
            Err(io::Error::other("disk full"))
        });
        assert!(failed.is_err());
        assert!(!dir.join("s.md").exists());
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let refused = create_new(&dir, "t.md", b"x").unwrap_err();
        assert!(
            refused.to_string().contains("writable by others"),
            "{refused}"
        );
        assert!(!dir.join("t.md").exists());
    }
}
