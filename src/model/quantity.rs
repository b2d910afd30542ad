//! Kubernetes resource quantities (`10Gi`, `500M`, `1.5Ti`, `1e9`) as bytes, for storage totals.
//! A quantity that does not parse is `None`: totals say what they could not count rather than
//! count it as zero.

/// Bytes in a storage quantity, rounded down; `None` when it is not a valid quantity.
pub fn bytes(q: &str) -> Option<u64> {
    let q = q.trim();
    let split = q
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(q.len());
    let (num, suffix) = q.split_at(split);
    if num.is_empty() || num.starts_with('-') {
        return None;
    }
    let value: f64 = num.parse().ok()?;
    let factor: f64 = match suffix {
        "" => 1.0,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        s if s.starts_with(['e', 'E']) => {
            let exp: i32 = s[1..].parse().ok()?;
            10f64.powi(exp)
        }
        _ => return None,
    };
    let b = value * factor;
    (b.is_finite() && b >= 0.0 && b < u64::MAX as f64).then_some(b as u64)
}

#[cfg(test)]
mod tests {
    use super::bytes;

    #[test]
    fn binary_decimal_and_exponent_suffixes() {
        assert_eq!(bytes("10Gi"), Some(10 * 1024 * 1024 * 1024));
        assert_eq!(bytes("512Mi"), Some(512 * 1024 * 1024));
        assert_eq!(bytes("1.5Ki"), Some(1536));
        assert_eq!(bytes("5G"), Some(5_000_000_000));
        assert_eq!(bytes("1e3"), Some(1000));
        assert_eq!(bytes("123"), Some(123));
        assert_eq!(bytes(" 2Ti "), Some(2 * 1024u64.pow(4)));
    }

    #[test]
    fn garbage_is_not_zero() {
        for q in [
            "",
            "Gi",
            "10GB",
            "-1Gi",
            "ten",
            "1e",
            "1.2.3Gi",
            "99999999999999999999Ei",
        ] {
            assert_eq!(bytes(q), None, "{q:?}");
        }
    }
}
