//! A query string as ordered key/value pairs: parsing (`?a=1&b=x%20y`, malformed escapes kept
//! literally) and serialising (RFC 3986 unreserved characters plus `,` and `:` left as they are).
//! The page keeps all of its state here; only `src/url_state.rs` reads and writes the real URL.

/// Ordered key/value pairs of a query string (no duplicate keys).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Query(pub Vec<(String, String)>);

impl Query {
    /// Parses `?a=1&b=x%20y` (leading `?` optional). Malformed escapes are kept literally.
    pub fn parse(search: &str) -> Query {
        let s = search.strip_prefix('?').unwrap_or(search);
        let mut q = Query::default();
        for part in s.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').unwrap_or((part, ""));
            q.set(&decode(k), &decode(v));
        }
        q
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Sets (or replaces) `key`.
    pub fn set(&mut self, key: &str, value: &str) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value.to_string(),
            None => self.0.push((key.to_string(), value.to_string())),
        }
    }

    /// Removes `key`.
    pub fn remove(&mut self, key: &str) {
        self.0.retain(|(k, _)| k != key);
    }

    /// Serialises as `?a=1&b=x%20y` (empty string when there are no pairs).
    pub fn to_search(&self) -> String {
        if self.0.is_empty() {
            return String::new();
        }
        let parts: Vec<String> = self.0.iter().map(|(k, v)| format!("{}={}", encode(k), encode(v))).collect();
        format!("?{}", parts.join("&"))
    }
}

fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b',' | b':' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b'%' if i + 2 < bytes.len() => {
                match u8::from_str_radix(std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz"), 16) {
                    Ok(v) => {
                        out.push(v);
                        i += 3;
                    }
                    Err(_) => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_write_round_trip() {
        let cases = [
            "",
            "?a=1",
            "?model=llama3-70b&system=nvidia_gb200_nvl72,domain%3D72,scale_out%3D50&gpus=2304",
            "?budget=350000%2A80&ext=recompute%3Dfull,zero%3D1",
            "?s=x%20y&t=%C3%A9t%C3%A9&u=%25&v=%26%3D%3F%23",
        ];
        for c in cases {
            let q = Query::parse(c);
            assert_eq!(q.to_search(), c, "{c}");
            assert_eq!(Query::parse(&q.to_search()), q);
        }
    }

    #[test]
    fn any_text_survives_a_round_trip() {
        let texts = ["a b", "x=1,y=2", "15T tokens", "μ & ü ~ '", "100%", "a+b", "", "?&=#"];
        for k in texts {
            for v in texts {
                let mut q = Query::default();
                q.set(if k.is_empty() { "k" } else { k }, v);
                assert_eq!(Query::parse(&q.to_search()), q, "{k:?}={v:?}");
            }
        }
    }

    #[test]
    fn set_get_remove_and_malformed_escapes() {
        let mut q = Query::parse("?a=1&b=2&a=3");
        assert_eq!(q.get("a"), Some("3"));
        assert_eq!(q.0.len(), 2);
        q.set("c", "x");
        q.remove("b");
        assert_eq!(q.to_search(), "?a=3&c=x");
        assert_eq!(Query::parse("?a=%zz&b=%4").get("a"), Some("%zz"));
        assert_eq!(Query::parse("a=x+y").get("a"), Some("x y"));
    }
}
