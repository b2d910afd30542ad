//! Reading a dump within a size limit: a regular file is measured before it is read; a pipe,
//! stdin or a device is read up to the limit and refused past it, so `--snapshot /dev/zero` or
//! an endless stdin stops with a message instead of growing until the machine runs out.

use std::io::Read;
use std::path::Path;

/// The default `--max-input`: far over any `kubectl get -A -o yaml` we have seen (200 MB for
/// 240,000 objects), and within what a laptop can analyse.
pub const DEFAULT_MAX_INPUT: u64 = 1 << 30;

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read {origin}: {source}")]
    Io {
        origin: String,
        source: std::io::Error,
    },
    #[error(
        "{origin} is larger than the input limit of {} (--max-input); pass a larger --max-input to read it",
        fmt_size(*.limit)
    )]
    TooLarge { origin: String, limit: u64 },
    #[error(
        "{origin} holds NUL bytes (at byte {offset}): not a YAML or JSON dump (a device or a binary file?)"
    )]
    Binary { origin: String, offset: u64 },
}

/// The bytes of `path` (`-` is stdin) and the name problems use for it.
pub fn read_input(path: &Path, limit: u64) -> Result<(Vec<u8>, String), InputError> {
    if path.as_os_str() == "-" {
        let origin = "<stdin>".to_string();
        let bytes = read_limited(std::io::stdin().lock(), &origin, limit, 0)?;
        return Ok((bytes, origin));
    }
    let origin = path.display().to_string();
    let io = |source| InputError::Io {
        origin: origin.clone(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_file() && meta.len() > limit {
        return Err(InputError::TooLarge { origin, limit });
    }
    let hint = if meta.is_file() { meta.len() } else { 0 };
    let bytes = read_limited(file, &origin, limit, hint)?;
    Ok((bytes, origin))
}

/// Reads at most `limit` bytes; one more is an error. Stops at the first NUL byte of a chunk:
/// no text dump holds one, and `/dev/zero` is all of them.
pub fn read_limited(
    mut r: impl Read,
    origin: &str,
    limit: u64,
    size_hint: u64,
) -> Result<Vec<u8>, InputError> {
    let mut out = Vec::with_capacity(usize::try_from(size_hint.min(limit)).unwrap_or(0));
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let n = match r.read(&mut chunk) {
            Ok(0) => return Ok(out),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(source) => {
                return Err(InputError::Io {
                    origin: origin.into(),
                    source,
                });
            }
        };
        let part = &chunk[..n];
        if let Some(i) = part.iter().position(|b| *b == 0) {
            return Err(InputError::Binary {
                origin: origin.into(),
                offset: out.len() as u64 + i as u64,
            });
        }
        if out.len() as u64 + n as u64 > limit {
            return Err(InputError::TooLarge {
                origin: origin.into(),
                limit,
            });
        }
        out.extend_from_slice(part);
    }
}

/// `1GiB`, `500MiB`, `200MB`, `1048576`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let err = || format!("not a size: {s:?} (e.g. 1GiB, 500MiB, 200MB)");
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| err())?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1_000,
        "kib" | "ki" => 1 << 10,
        "m" | "mb" => 1_000_000,
        "mib" | "mi" => 1 << 20,
        "g" | "gb" => 1_000_000_000,
        "gib" | "gi" => 1 << 30,
        _ => return Err(err()),
    };
    n.checked_mul(mult).ok_or_else(err)
}

pub fn fmt_size(n: u64) -> String {
    if n >= 1 << 30 && n.is_multiple_of(1 << 30) {
        format!("{}GiB", n >> 30)
    } else if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{}MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{}KiB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}

/// Line and column (1-based, the column in bytes) of a byte offset.
pub fn line_col(bytes: &[u8], offset: usize) -> (usize, usize) {
    let upto = &bytes[..offset.min(bytes.len())];
    let line = upto.iter().filter(|b| **b == b'\n').count() + 1;
    let col = upto.iter().rev().take_while(|b| **b != b'\n').count() + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_print() {
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("500MiB"), Ok(500 << 20));
        assert_eq!(parse_size("200MB"), Ok(200_000_000));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("lots").is_err());
        assert_eq!(fmt_size(1 << 30), "1GiB");
    }

    #[test]
    fn a_stream_past_the_limit_is_refused_and_nul_bytes_stop_at_once() {
        let endless = std::io::repeat(b'a');
        assert!(matches!(
            read_limited(endless, "-", 1 << 20, 0),
            Err(InputError::TooLarge { .. })
        ));
        assert!(matches!(
            read_limited(std::io::repeat(0), "/dev/zero", 1 << 30, 0),
            Err(InputError::Binary { offset: 0, .. })
        ));
        assert_eq!(read_limited(&b"abc"[..], "x", 3, 0).unwrap(), b"abc");
    }

    #[test]
    fn positions_are_one_based() {
        assert_eq!(line_col(b"ab\ncd", 4), (2, 2));
        assert_eq!(line_col(b"ab", 0), (1, 1));
    }
}
