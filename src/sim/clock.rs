//! Time as the API server writes it (RFC 3339, whole seconds, `Z`), ages as kubectl prints them,
//! and the `${now-15m}` placeholders of scenario files.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

pub fn format_ts(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

pub fn now_rfc3339() -> String {
    format_ts(Timestamp::now())
}

/// `5s`, `2m`, `1h`, `7d`, `250ms`, `1.5s`: the durations of scenario offsets and fault specs.
pub fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let n: f64 = num.trim().parse().ok()?;
    if !n.is_finite() || n < 0.0 {
        return None;
    }
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        "d" => n * 86400.0,
        _ => return None,
    };
    // `try_`: "1e30s" is a user's typo, not a reason to panic.
    Duration::try_from_secs_f64(secs).ok()
}

/// Replaces every `${now}`, `${now-15m}`, `${now+30s}` in `s` by the time relative to `now`.
/// Unknown placeholders are left as they are, so a typo shows in the object instead of vanishing.
pub fn expand_now(s: &str, now: Timestamp) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${now") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let expr = &after[..end];
        match eval_now(expr, now) {
            Some(ts) => out.push_str(&format_ts(ts)),
            None => out.push_str(&rest[start..start + 2 + end + 1]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

fn eval_now(expr: &str, now: Timestamp) -> Option<Timestamp> {
    let off = expr.strip_prefix("now")?.trim();
    if off.is_empty() {
        return Some(now);
    }
    let (sign, d) = if let Some(d) = off.strip_prefix('-') {
        (-1, d)
    } else if let Some(d) = off.strip_prefix('+') {
        (1, d)
    } else {
        return None;
    };
    let d = SignedDuration::try_from(parse_duration(d)?).ok()?;
    now.checked_add(if sign < 0 { -d } else { d }).ok()
}

/// Walks a JSON value and expands `${now...}` in every string.
pub fn expand_value(v: &mut serde_json::Value, now: Timestamp) {
    match v {
        serde_json::Value::String(s) if s.contains("${now") => *s = expand_now(s, now),
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| expand_value(x, now)),
        serde_json::Value::Object(m) => m.values_mut().for_each(|x| expand_value(x, now)),
        _ => {}
    }
}

/// kubectl's `HumanDuration`: `45s`, `5m`, `5m30s`, `3h`, `2d3h`, `400d`.
pub fn human_age(created: &str, now: Timestamp) -> String {
    let Ok(ts) = created.parse::<Timestamp>() else {
        return "<unknown>".into();
    };
    let secs = now.duration_since(ts).as_secs();
    if secs < 0 {
        return "<invalid>".into();
    }
    let s = secs;
    if s < 120 {
        return format!("{s}s");
    }
    let m = s / 60;
    if m < 10 {
        let rs = s % 60;
        return if rs == 0 {
            format!("{m}m")
        } else {
            format!("{m}m{rs}s")
        };
    }
    if m < 180 {
        return format!("{m}m");
    }
    let h = m / 60;
    if h < 8 {
        let rm = m % 60;
        return if rm == 0 {
            format!("{h}h")
        } else {
            format!("{h}h{rm}m")
        };
    }
    if h < 48 {
        return format!("{h}h");
    }
    let d = h / 24;
    if d < 8 {
        let rh = h % 24;
        return if rh == 0 {
            format!("{d}d")
        } else {
            format!("{d}d{rh}h")
        };
    }
    if d < 365 * 2 {
        return format!("{d}d");
    }
    format!("{}y", d / 365)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_placeholders() {
        let now: Timestamp = "2025-01-01T12:00:00Z".parse().unwrap();
        assert_eq!(expand_now("${now}", now), "2025-01-01T12:00:00Z");
        assert_eq!(
            expand_now("a ${now-15m} b", now),
            "a 2025-01-01T11:45:00Z b"
        );
        assert_eq!(expand_now("${now+30s}", now), "2025-01-01T12:00:30Z");
        assert_eq!(expand_now("${now+2h}", now), "2025-01-01T14:00:00Z");
        assert_eq!(expand_now("${nope}", now), "${nope}");
        assert_eq!(expand_now("${now?1m}", now), "${now?1m}");
    }

    #[test]
    fn ages() {
        let now: Timestamp = "2025-01-01T12:00:00Z".parse().unwrap();
        assert_eq!(human_age("2025-01-01T11:59:15Z", now), "45s");
        assert_eq!(human_age("2025-01-01T11:54:30Z", now), "5m30s");
        assert_eq!(human_age("2025-01-01T09:00:00Z", now), "3h");
        assert_eq!(human_age("2024-12-29T09:00:00Z", now), "3d3h");
        assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration("x"), None);
    }
}
