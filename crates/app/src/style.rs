//! The page's stylesheets that travel inside the modules: emitted as a `<style>` element with
//! their views, so they apply wherever the app is mounted (the page, an iframe, a custom element's
//! shadow root, the single-file offline bundle), and by the first view (`crates/first-view`),
//! which draws the explorer before the page's module has loaded. Compiled in from `style/` without
//! comments and unread whitespace (`build.rs`: the rules).

/// The explorer's stylesheet (`style/explorer.css`).
pub const EXPLORER_CSS: &str = include_str!(concat!(env!("OUT_DIR"), "/explorer.css"));

/// The sensitivity strip's stylesheet (`style/sensitivity.css`).
pub const SENSITIVITY_CSS: &str = include_str!(concat!(env!("OUT_DIR"), "/sensitivity.css"));

#[cfg(test)]
mod tests {
    use super::*;

    /// `css` without comments and without any whitespace outside quoted strings.
    fn bare(css: &str) -> String {
        let mut out = String::new();
        let mut rest = css;
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix("/*") {
                rest = after.split_once("*/").map_or("", |(_, r)| r);
            } else if let Some(q) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') {
                let end = rest[1..].find(q).map_or(rest.len(), |j| j + 2);
                out.push_str(&rest[..end]);
                rest = &rest[end..];
            } else {
                let c = rest.chars().next().unwrap_or(' ');
                if !c.is_whitespace() {
                    out.push(c);
                }
                rest = &rest[c.len_utf8()..];
            }
        }
        out
    }

    #[test]
    fn the_copies_drop_only_comments_and_whitespace() {
        for (copy, file) in [(EXPLORER_CSS, "explorer.css"), (SENSITIVITY_CSS, "sensitivity.css")] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../style").join(file);
            let source = std::fs::read_to_string(&path).expect("the stylesheet");
            assert_eq!(bare(copy), bare(&source), "{file}: the rules are the file's");
            assert!(copy.len() < source.len() * 9 / 10, "{file}: {} of {} bytes", copy.len(), source.len());
            assert!(!copy.contains("/*") && !copy.contains("  ") && !copy.contains('\n'), "{file}");
            // The spaces CSS reads stay: a descendant before a pseudo-class, `and (` in a query.
            assert!(!copy.contains("and("), "{file}");
        }
        assert!(EXPLORER_CSS.contains("@media (max-width:") || EXPLORER_CSS.contains("@media ("));
    }
}
