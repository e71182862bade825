//! Messages in the user's words: a rejected input is shown next to its field, so the message is
//! the broken rule and the hint (with the value as typed), not core's `field.path = value: rule`
//! form with its dotted JSON names.

use fmperf_core::Error;

/// What a field shows for an error: `“value” rule (hint)` for an invalid value, the error's
/// own text otherwise; starting with a capital letter (an ASCII one: core's rules are English;
/// a value's quote mark stays as typed).
pub fn field_message(e: &Error) -> String {
    let text = match e {
        Error::InvalidField { rule, hint, value, .. } => {
            let v = value.trim();
            let head = if v.is_empty() || v == "(empty)" { rule.clone() } else { format!("“{v}” {rule}") };
            match hint {
                Some(h) => format!("{head} ({h})"),
                None => head,
            }
        }
        other => other.to_string(),
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => std::iter::once(first.to_ascii_uppercase()).chain(chars).collect(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_value_and_the_rule_not_the_json_path() {
        let e = Error::invalid("ext.recompute", "sometimes", "must be none, selective or full").with_hint("e.g. full");
        let m = field_message(&e);
        assert_eq!(m, "“sometimes” must be none, selective or full (e.g. full)");
        assert!(!m.contains("ext."));
        assert_eq!(field_message(&Error::invalid("gpus", "(empty)", "is required")), "Is required");
    }
}
