//! An ordered JSON tree and its pretty printer, so exported documents keep a readable key order
//! (`schema_version` and `kind` first) without changing serde_json's features for the workspace.

/// A JSON value with ordered object keys.
#[derive(Debug, Clone, PartialEq)]
pub enum J {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(u64),
    /// A real number (always finite here; non-finite values print as `null`).
    Num(f64),
    /// A string.
    Str(String),
    /// A list.
    Arr(Vec<J>),
    /// An object with keys in insertion order.
    Obj(Vec<(String, J)>),
}

impl J {
    /// An empty object.
    pub fn obj() -> J {
        J::Obj(Vec::new())
    }

    /// Appends `key: value` to an object (no effect on other variants).
    pub fn put(mut self, key: &str, value: J) -> J {
        if let J::Obj(items) = &mut self {
            items.push((key.to_string(), value));
        }
        self
    }

    /// Appends `key: value` only when `value` is `Some`.
    pub fn put_some(self, key: &str, value: Option<J>) -> J {
        match value {
            Some(v) => self.put(key, v),
            None => self,
        }
    }

    /// An integer or `null`.
    pub fn int(v: Option<u64>) -> J {
        v.map_or(J::Null, J::Int)
    }

    /// A number or `null`.
    pub fn num(v: Option<f64>) -> J {
        v.map_or(J::Null, J::Num)
    }

    /// A string or `null`.
    pub fn text(v: Option<&str>) -> J {
        v.map_or(J::Null, |s| J::Str(s.to_string()))
    }

    /// A list of strings.
    pub fn texts<S: AsRef<str>>(v: &[S]) -> J {
        J::Arr(v.iter().map(|s| J::Str(s.as_ref().to_string())).collect())
    }

    /// Pretty-printed JSON text with two-space indentation and a final newline.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0);
        out.push('\n');
        out
    }

    fn write(&self, out: &mut String, depth: usize) {
        match self {
            J::Null => out.push_str("null"),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Int(n) => out.push_str(&n.to_string()),
            J::Num(x) => match serde_json::Number::from_f64(*x) {
                Some(n) => out.push_str(&n.to_string()),
                None => out.push_str("null"),
            },
            J::Str(s) => out.push_str(&serde_json::Value::String(s.clone()).to_string()),
            J::Arr(items) if items.is_empty() => out.push_str("[]"),
            J::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    out.push_str(if i == 0 { "\n" } else { ",\n" });
                    indent(out, depth + 1);
                    item.write(out, depth + 1);
                }
                out.push('\n');
                indent(out, depth);
                out.push(']');
            }
            J::Obj(items) if items.is_empty() => out.push_str("{}"),
            J::Obj(items) => {
                out.push('{');
                for (i, (k, v)) in items.iter().enumerate() {
                    out.push_str(if i == 0 { "\n" } else { ",\n" });
                    indent(out, depth + 1);
                    out.push_str(&serde_json::Value::String(k.clone()).to_string());
                    out.push_str(": ");
                    v.write(out, depth + 1);
                }
                out.push('\n');
                indent(out, depth);
                out.push('}');
            }
        }
    }
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_ordered_and_parseable() {
        let j = J::obj()
            .put("b", J::Int(2))
            .put("a", J::Num(989.4))
            .put("s", J::Str("q\"x".into()))
            .put("l", J::Arr(vec![J::Null, J::Bool(true)]))
            .put("e", J::obj());
        let text = j.render();
        assert!(text.find("\"b\"").unwrap() < text.find("\"a\"").unwrap());
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["a"].as_f64(), Some(989.4));
        assert_eq!(v["s"].as_str(), Some("q\"x"));
    }
}
