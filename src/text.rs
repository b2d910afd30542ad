//! Text from the cluster, made safe to show on a terminal. Names, messages, phases and file
//! contents are written by whoever can create an object; printed raw, an ESC sequence in an
//! Event message retitles the terminal or clears the screen, a CR or backspace overwrites what
//! was printed before it, and a bidi override makes `evil` read as `live`. Every human-readable
//! output (the dashboard, `check -o text`, `action`, warnings and errors) goes through here;
//! JSON output does not, because JSON escapes for itself and scripts need the exact strings.

use std::borrow::Cow;

/// Bidi embeddings, overrides and isolates: they reorder what follows them on screen, so the
/// text a person reads is not the text that is there. Dropped, not escaped: the characters
/// around them are what matters, and marks like U+200E that only nudge direction are left.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// C0, DEL and C1: what a terminal acts on instead of printing.
pub fn is_terminal_control(c: char) -> bool {
    matches!(c, '\0'..='\u{1F}' | '\u{7F}'..='\u{9F}')
}

fn needs_care(c: char, keep_layout: bool) -> bool {
    if keep_layout && (c == '\n' || c == '\t') {
        return false;
    }
    is_terminal_control(c) || is_bidi_control(c)
}

fn clean(s: &str, keep_layout: bool) -> Cow<'_, str> {
    if !s.chars().any(|c| needs_care(c, keep_layout)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !needs_care(c, keep_layout) {
            out.push(c);
        } else if is_bidi_control(c) {
            // dropped
        } else {
            match c {
                '\u{1B}' => out.push_str("\\e"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                _ => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            }
        }
    }
    Cow::Owned(out)
}

/// For output that may span lines (`check -o text`, plans, error messages): newline and tab
/// keep their meaning, every other control character is shown as an escape (`\e`, `\r`,
/// `\x07`, `\x9b`), bidi controls are dropped.
pub fn for_terminal(s: &str) -> Cow<'_, str> {
    clean(s, true)
}

/// For one cell or one line (a table cell, a name in a header): like [`for_terminal`], and a
/// newline or tab is shown as `\n` / `\t` too, so a value cannot break the layout around it.
pub fn one_line(s: &str) -> Cow<'_, str> {
    clean(s, false)
}

/// [`one_line`] for a `String` already owned: no copy when there is nothing to change.
pub fn one_line_owned(s: String) -> String {
    match one_line(&s) {
        Cow::Borrowed(_) => s,
        Cow::Owned(o) => o,
    }
}

/// [`for_terminal`] for a `String` already owned.
pub fn for_terminal_owned(s: String) -> String {
    match for_terminal(&s) {
        Cow::Borrowed(_) => s,
        Cow::Owned(o) => o,
    }
}

/// Writes one line to stdout through [`for_terminal`]. A reader that went away (`| head`) ends
/// the output quietly, where `println!` would panic.
pub fn print_out(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", for_terminal(line));
}

/// Writes one line to stderr through [`for_terminal`].
pub fn print_err(line: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", for_terminal(line));
}

/// `println!` for lines that quote cluster text: formatted, then sanitized for the terminal.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => { $crate::text::print_out(&format!($($arg)*)) };
}

/// `eprintln!` for warnings and errors that quote cluster text.
#[macro_export]
macro_rules! say_err {
    ($($arg:tt)*) => { $crate::text::print_err(&format!($($arg)*)) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        for s in [
            "",
            "restore-1",
            "vm-disk-data-orig-de3e",
            "日本語 ✓ ▶ …",
            "C:\\path\\e",
        ] {
            assert!(
                matches!(for_terminal(s), Cow::Borrowed(b) if b == s),
                "{s:?}"
            );
            assert!(matches!(one_line(s), Cow::Borrowed(b) if b == s), "{s:?}");
        }
    }

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        let cases = [
            ("\u{1b}]0;owned\u{7}", "\\e]0;owned\\x07"),
            ("\u{1b}[2J\u{1b}[H", "\\e[2J\\e[H"),
            ("ok\rFAILED", "ok\\rFAILED"),
            ("abc\u{8}\u{8}x", "abc\\x08\\x08x"),
            ("\u{9b}31m", "\\x9b31m"),
            ("del\u{7f}", "del\\x7f"),
            ("nul\0", "nul\\x00"),
            ("\u{85}next", "\\x85next"),
        ];
        for (raw, shown) in cases {
            assert_eq!(for_terminal(raw), shown, "{raw:?}");
            assert_eq!(one_line(raw), shown, "{raw:?}");
        }
    }

    #[test]
    fn newline_and_tab_keep_their_meaning_only_where_lines_are_allowed() {
        assert_eq!(for_terminal("a\n\tb"), "a\n\tb");
        assert_eq!(one_line("a\n\tb"), "a\\n\\tb");
    }

    #[test]
    fn bidi_overrides_and_isolates_are_dropped() {
        for c in ('\u{202A}'..='\u{202E}').chain('\u{2066}'..='\u{2069}') {
            let s = format!("vm-{c}evil");
            assert_eq!(for_terminal(&s), "vm-evil", "U+{:04X}", u32::from(c));
            assert_eq!(one_line(&s), "vm-evil", "U+{:04X}", u32::from(c));
        }
        // Neighbours that do not reorder text stay.
        assert_eq!(for_terminal("a\u{200E}b\u{2065}c"), "a\u{200E}b\u{2065}c");
    }

    #[test]
    fn nothing_a_terminal_acts_on_survives_any_input() {
        let all: String = (0u32..0x3000).filter_map(char::from_u32).collect();
        for out in [for_terminal(&all), one_line(&all)] {
            assert!(
                !out.chars()
                    .any(|c| (is_terminal_control(c) && c != '\n' && c != '\t')
                        || is_bidi_control(c)),
                "a control character passed"
            );
        }
        assert!(!one_line(&all).contains(['\n', '\t']));
    }
}
