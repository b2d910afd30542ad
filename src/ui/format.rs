//! Turning typed values into text at draw time: ages move with the clock, sizes stay numbers
//! until the moment they are shown, and anything too wide is cut with an ellipsis.

use jiff::{SignedDuration, Timestamp, tz::TimeZone};
use std::borrow::Cow;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// k9s-style compact age: `42s`, `90s`, `42m`, `3h12m`, `2d4h`. Negative ages (clock skew,
/// future deadlines) are shown as `0s` here; callers that need "in 5m" use `until`.
pub fn age(d: SignedDuration) -> String {
    let s = d.as_secs().max(0);
    match s {
        // Seconds matter only in the first two minutes; after that they are noise.
        0..120 => format!("{s}s"),
        120..3600 => format!("{}m", s / 60),
        3600..86400 => format!("{}h{}m", s / 3600, (s % 3600) / 60),
        _ => format!("{}d{}h", s / 86400, (s % 86400) / 3600),
    }
}

/// Age of `t` at `now`, or `-` when unknown.
pub fn age_since(now: Timestamp, t: Option<Timestamp>) -> String {
    match t {
        Some(t) => age(now.duration_since(t)),
        None => "-".into(),
    }
}

/// Time left until `deadline`: `12m`, or `overdue 3m`.
pub fn time_left(now: Timestamp, deadline: Option<Timestamp>) -> String {
    match deadline {
        None => "-".into(),
        Some(d) => {
            let left = d.duration_since(now);
            if left.is_negative() {
                format!("overdue {}", age(-left))
            } else {
                age(left)
            }
        }
    }
}

/// Wall-clock time of day in the given zone, `HH:MM:SS`.
pub fn clock(now: Timestamp, tz: &TimeZone) -> String {
    now.to_zoned(tz.clone()).strftime("%H:%M:%S").to_string()
}

/// Date and time for "taken at", `YYYY-MM-DD HH:MM`.
pub fn datetime(t: Timestamp, tz: &TimeZone) -> String {
    t.to_zoned(tz.clone())
        .strftime("%Y-%m-%d %H:%M")
        .to_string()
}

/// Binary units, one decimal: `6.2GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n}B")
    } else {
        format!("{v:.1}{}", UNITS[unit])
    }
}

/// The first characters of a UID: enough to compare by eye, short enough for a column.
pub fn short_uid(uid: &str) -> &str {
    let end = uid.char_indices().nth(8).map_or(uid.len(), |(i, _)| i);
    &uid[..end]
}

/// Display width in terminal cells, of the text as it is shown (control characters escaped).
pub fn width(s: &str) -> usize {
    // Most cluster text is printable ASCII, one cell a byte: every cell of every row is measured
    // on each frame (to size the columns), so skip the cleaning and grapheme walk for it.
    if is_plain_ascii(s) {
        return s.len();
    }
    crate::text::one_line(s).width()
}

/// Printable ASCII only: nothing to clean, and as many cells as bytes.
fn is_plain_ascii(s: &str) -> bool {
    s.bytes().all(|b| (0x20..0x7f).contains(&b))
}

/// Cuts `s` to at most `max` cells, ending with `…` when something was cut. Every table cell
/// passes here, so this is where cluster text is made safe for the dashboard: control
/// characters shown as escapes, bidi controls dropped (`crate::text`).
pub fn truncate(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max && is_plain_ascii(s) {
        return Cow::Borrowed(s);
    }
    match crate::text::one_line(s) {
        Cow::Borrowed(clean) => cut(clean, max),
        Cow::Owned(clean) => Cow::Owned(cut(&clean, max).into_owned()),
    }
}

fn cut(s: &str, max: usize) -> Cow<'_, str> {
    if s.width() <= max {
        return Cow::Borrowed(s);
    }
    if max == 0 {
        return Cow::Borrowed("");
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > max - 1 {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    Cow::Owned(out)
}

/// Pads or cuts to exactly `w` cells.
pub fn fit(s: &str, w: usize, right: bool) -> String {
    let t = truncate(s, w);
    let pad = w.saturating_sub(width(&t));
    // Every visible cell of a table passes here on each draw: one allocation, no formatting.
    let mut out = String::with_capacity(t.len() + pad);
    if right {
        out.extend(std::iter::repeat_n(' ', pad));
        out.push_str(&t);
    } else {
        out.push_str(&t);
        out.extend(std::iter::repeat_n(' ', pad));
    }
    out
}

/// The last guard between cluster text and the terminal: whatever a widget let through, no cell
/// holds a control character or a bidi control once a frame is drawn. Text is shown escaped
/// where it is built (`truncate`, titles, messages); this catches what a new view forgets.
pub fn scrub(buf: &mut ratatui::buffer::Buffer) {
    scrub_cells(&mut buf.content);
}

/// `scrub` of some of a buffer's cells.
pub fn scrub_cells(cells: &mut [ratatui::buffer::Cell]) {
    use crate::text::{is_bidi_control, is_terminal_control};
    let bad = |c: char| is_terminal_control(c) || is_bidi_control(c);
    for cell in cells.iter_mut() {
        // Most cells hold one printable ASCII byte (every table row is drawn a byte per cell).
        if let [b] = cell.symbol().as_bytes()
            && (0x20..0x7f).contains(b)
        {
            continue;
        }
        if cell.symbol().chars().any(bad) {
            let kept: String = cell.symbol().chars().filter(|c| !bad(*c)).collect();
            cell.set_symbol(if kept.is_empty() { " " } else { &kept });
        }
    }
}

/// `n` spaces, borrowed when short (a table cell's padding, on every redraw).
pub fn spaces(n: usize) -> Cow<'static, str> {
    const SPACES: &str = match str::from_utf8(&[b' '; 256]) {
        Ok(s) => s,
        Err(_) => "",
    };
    match SPACES.get(..n) {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(" ".repeat(n)),
    }
}

/// A text progress bar of `w` cells for `pct` percent.
pub fn bar(pct: f64, w: usize) -> String {
    let pct = pct.clamp(0.0, 100.0);
    let full = ((pct / 100.0) * w as f64).round() as usize;
    let full = full.min(w);
    format!("{}{}", "█".repeat(full), "░".repeat(w - full))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spaces_are_as_many_as_asked_short_or_long() {
        for n in [0, 1, 7, 256, 257, 1000] {
            let s = spaces(n);
            assert_eq!(s.len(), n);
            assert!(s.bytes().all(|b| b == b' '));
        }
    }

    #[test]
    fn scrub_keeps_printable_cells_and_drops_controls() {
        use ratatui::buffer::{Buffer, Cell};
        use ratatui::layout::Rect;
        let mut buf = Buffer::empty(Rect::new(0, 0, 6, 1));
        buf.content[0].set_symbol("a");
        buf.content[1].set_symbol("~");
        buf.content[2].set_symbol("\u{1b}");
        buf.content[3].set_symbol("e\u{301}");
        buf.content[4].set_symbol("\u{7f}");
        buf.content[5].set_symbol("x\u{202e}");
        scrub(&mut buf);
        let symbols: Vec<&str> = buf.content.iter().map(Cell::symbol).collect();
        assert_eq!(symbols, ["a", "~", " ", "e\u{301}", " ", "x"]);
    }

    #[test]
    fn ages_are_compact_and_never_negative() {
        assert_eq!(age(SignedDuration::from_secs(42)), "42s");
        assert_eq!(age(SignedDuration::from_secs(90)), "90s");
        assert_eq!(age(SignedDuration::from_secs(252)), "4m");
        assert_eq!(age(SignedDuration::from_secs(2520)), "42m");
        assert_eq!(age(SignedDuration::from_secs(3 * 3600 + 720)), "3h12m");
        assert_eq!(age(SignedDuration::from_secs(2 * 86400 + 4 * 3600)), "2d4h");
        assert_eq!(age(SignedDuration::from_secs(-5)), "0s");
    }

    #[test]
    fn truncation_marks_the_cut_and_respects_wide_characters() {
        assert_eq!(truncate("restore-test", 20), "restore-test");
        assert_eq!(truncate("restore-test", 8), "restore…");
        assert_eq!(truncate("日本語のテキスト", 5), "日本…");
        assert_eq!(width(&truncate(&"x".repeat(300), 40)), 40);
        assert_eq!(fit("42", 5, true), "   42");
    }

    #[test]
    fn cells_show_control_characters_and_drop_bidi_overrides() {
        assert_eq!(truncate("\u{1b}]0;x\u{7}", 20), "\\e]0;x\\x07");
        assert_eq!(truncate("a\u{202e}b\nc", 20), "ab\\nc");
        assert_eq!(fit("\u{1b}[2J", 8, false), "\\e[2J   ");
        assert_eq!(width("\u{1b}"), 2);
    }

    #[test]
    fn the_plain_ascii_shortcut_measures_and_cuts_as_the_cleaning_path_does() {
        let slow_width = |s: &str| crate::text::one_line(s).width();
        let slow_cut = |s: &str, max: usize| cut(&crate::text::one_line(s), max).into_owned();
        for s in [
            "",
            "restore-test-9xgxn",
            "tab\there",
            "del\u{7f}",
            "esc\u{1b}[31m",
            "nul\u{0}",
            "~ and space ",
            "é",
        ] {
            assert_eq!(width(s), slow_width(s), "{s:?}");
            for max in [0, 3, 5, 40] {
                assert_eq!(truncate(s, max), slow_cut(s, max), "{s:?} in {max}");
            }
        }
    }

    #[test]
    fn a_drawn_frame_holds_no_control_or_bidi_character() {
        use ratatui::buffer::Buffer;
        use ratatui::layout::Rect;
        let mut buf = Buffer::empty(Rect::new(0, 0, 3, 1));
        buf[(0, 0)].set_symbol("m\u{202e}");
        buf[(1, 0)].set_symbol("\u{1b}");
        buf[(2, 0)].set_symbol("é");
        scrub(&mut buf);
        let cells: Vec<&str> = buf.content.iter().map(|c| c.symbol()).collect();
        assert_eq!(cells, ["m", " ", "é"]);
    }

    #[test]
    fn bytes_use_binary_units() {
        assert_eq!(bytes(512), "512B");
        assert_eq!(bytes(6_657_199_308), "6.2GiB");
    }
}
