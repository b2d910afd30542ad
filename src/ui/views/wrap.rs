//! Word wrapping of styled text into lines of a known count, so a layout can give a block of
//! wrapped text exactly the rows it needs (ratatui's own wrapping does not say how many).

use super::super::format;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// Wraps `spans` to `width` columns; the first line starts with `lead` spaces, the ones after
/// with `indent`. Words keep their span's style; a word wider than a line is cut across lines.
pub fn wrap(
    spans: &[(String, Style)],
    width: usize,
    lead: usize,
    indent: usize,
) -> Vec<Line<'static>> {
    let width = width.max(1);
    let indent = indent.min(width.saturating_sub(1));
    let lead = lead.min(width.saturating_sub(1));
    let mut lines: Vec<Vec<Span<'static>>> = vec![vec![Span::raw(" ".repeat(lead))]];
    let mut used = lead;
    for (text, style) in spans {
        for (n, word) in text.split(' ').enumerate() {
            // The space before every word but a span's first belongs to the text.
            let space = usize::from(n > 0);
            let w = format::width(word);
            if used > indent.min(lead) && used + space + w > width {
                lines.push(vec![Span::raw(" ".repeat(indent))]);
                used = indent;
            } else if space == 1 && used > 0 {
                push(&mut lines, " ", *style);
                used += 1;
            }
            let mut rest = word.to_string();
            while used + format::width(&rest) > width {
                let room = width - used;
                let (head, tail) = split_at_width(&rest, room.max(1));
                push(&mut lines, &head, *style);
                lines.push(vec![Span::raw(" ".repeat(indent))]);
                used = indent;
                rest = tail;
            }
            if !rest.is_empty() {
                used += format::width(&rest);
                push(&mut lines, &rest, *style);
            }
        }
    }
    lines.into_iter().map(Line::from).collect()
}

fn push(lines: &mut [Vec<Span<'static>>], text: &str, style: Style) {
    if let Some(last) = lines.last_mut() {
        last.push(Span::styled(text.to_string(), style));
    }
}

/// The longest head of `s` at most `w` columns wide (at least one character), and the rest.
fn split_at_width(s: &str, w: usize) -> (String, String) {
    let mut head = String::new();
    let mut used = 0;
    for (i, c) in s.char_indices() {
        let cw = format::width(c.encode_utf8(&mut [0; 4]));
        if used + cw > w && !head.is_empty() {
            return (head, s[i..].to_string());
        }
        head.push(c);
        used += cw;
    }
    (head, String::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn words_wrap_with_a_hanging_indent_and_long_words_are_cut() {
        let st = Style::default();
        let l = wrap(
            &[
                ("error ".into(), st),
                ("the disk vm-disk-data is half renamed".into(), st),
            ],
            16,
            0,
            2,
        );
        assert_eq!(
            text(&l),
            ["error the disk", "  vm-disk-data", "  is half", "  renamed"]
        );
        for line in &l {
            assert!(line.width() <= 16);
        }
        let l = wrap(&[("x".repeat(25), st)], 10, 2, 2);
        assert_eq!(text(&l), ["  xxxxxxxx", "  xxxxxxxx", "  xxxxxxxx", "  x"]);
    }
}
