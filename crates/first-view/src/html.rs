//! Writing HTML by hand: text and attribute values escaped, so that a name from the user's own
//! catalog entries (or the URL) is shown as typed and never read as markup.

/// `s` as HTML text or a double-quoted attribute value: `&`, `<`, `>`, `"` and `'` escaped.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// ` name="value"` with the value escaped.
pub fn attr(name: &str, value: &str) -> String {
    format!(" {name}=\"{}\"", escape(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_escaped() {
        assert_eq!(
            escape(r#"<b class="x">Tom & 'Jerry'</b>"#),
            "&lt;b class=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/b&gt;"
        );
        assert_eq!(attr("title", "a\"b"), " title=\"a&quot;b\"");
        assert_eq!(escape("1,024 · ±8 %"), "1,024 · ±8 %");
    }
}
