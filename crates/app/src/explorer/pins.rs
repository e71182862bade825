//! The configurations the explorer compares (the `cmp` key): each a scenario (model, system spec,
//! domain size [devices], global batch [samples]) and a configuration, written
//! `model~system~domain~batch~config`, at most [`MAX_PINS`], added, dropped and read back.

use fmperf_core::Error;
use fmperf_core::search::code::parse_candidate;
use fmperf_core::vocab::Candidate;

use super::CMP;
use crate::query::Query;

/// One configuration to compare: a scenario (model, system, domain, batch) and a configuration;
/// the device count is the configuration's.
#[derive(Debug, Clone, PartialEq)]
pub struct Pin {
    /// Model id.
    pub model: String,
    /// System spec (`id[,key=value]…`).
    pub system: String,
    /// Domain size [devices].
    pub domain: u64,
    /// Global batch [samples].
    pub batch: u64,
    /// The configuration.
    pub candidate: Candidate,
}

/// Largest number of compared configurations.
pub const MAX_PINS: usize = 4;

impl Pin {
    /// The text form `model~system~domain~batch~config` (the system spec's commas written as `;`,
    /// since the `cmp` key separates pins with commas).
    pub fn to_text(&self) -> String {
        format!(
            "{}~{}~{}~{}~{}",
            self.model,
            self.system.replace(',', ";"),
            self.domain,
            self.batch,
            fmperf_core::search::code::format_candidate(&self.candidate)
        )
    }

    /// Parses the text form.
    pub fn parse(text: &str) -> Result<Pin, Error> {
        let parts: Vec<&str> = text.split('~').collect();
        let [model, system, domain, batch, config] = parts.as_slice() else {
            return Err(Error::invalid(CMP, text, "must be model~system~domain~batch~config"));
        };
        let num = |s: &str| s.parse::<u64>().ok().filter(|&v| v > 0);
        let (Some(domain), Some(batch)) = (num(domain), num(batch)) else {
            return Err(Error::invalid(CMP, text, "domain size and batch must be positive whole numbers"));
        };
        Ok(Pin {
            model: model.to_string(),
            system: system.replace(';', ","),
            domain,
            batch,
            candidate: parse_candidate(config)?,
        })
    }
}

/// The compared configurations of a query (unparseable entries are reported, not dropped).
pub fn pins_from_query(q: &Query) -> Vec<Result<Pin, (String, Error)>> {
    q.get(CMP)
        .unwrap_or("")
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .take(MAX_PINS)
        .map(|s| Pin::parse(s).map_err(|e| (s.to_string(), e)))
        .collect()
}

/// The pin texts of the `cmp` key, in order.
pub fn pin_items(q: &Query) -> Vec<String> {
    q.get(CMP).unwrap_or("").split(',').filter(|s| !s.is_empty()).map(str::to_string).collect()
}

/// Sets the `cmp` key to `items` (removes it when empty).
fn set_pin_items(q: &mut Query, items: &[String]) {
    if items.is_empty() { q.remove(CMP) } else { q.set(CMP, &items.join(",")) }
}

/// Adds a pin unless present; when [`MAX_PINS`] are pinned already, the oldest goes if
/// `drop_oldest`, else nothing is added.
pub fn add_pin(q: &mut Query, text: &str, drop_oldest: bool) {
    let mut items = pin_items(q);
    if items.iter().any(|x| x == text) {
        return;
    }
    if items.len() >= MAX_PINS {
        if !drop_oldest {
            return;
        }
        items.remove(0);
    }
    items.push(text.to_string());
    set_pin_items(q, &items);
}

/// Removes a pin.
pub fn remove_pin(q: &mut Query, text: &str) {
    let mut items = pin_items(q);
    items.retain(|x| x != text);
    set_pin_items(q, &items);
}

#[cfg(test)]
mod tests {
    use super::*;
    use fmperf_core::search::code::format_candidate;

    #[test]
    fn compared_configurations_round_trip_with_system_options() {
        let candidate = parse_candidate("1d.dp16.tp4.pp32.mbs1.nv4x1x1").unwrap();
        let pin = Pin {
            model: "llama3-70b".into(),
            system: "nvidia_gb200_nvl72,scale_out=50,nics=2".into(),
            domain: 72,
            batch: 4096,
            candidate,
        };
        let mut q = Query::default();
        add_pin(&mut q, &pin.to_text(), true);
        add_pin(&mut q, &pin.to_text(), true);
        assert_eq!(pin_items(&q).len(), 1);
        let back = pins_from_query(&Query::parse(&q.to_search()));
        assert_eq!(back.len(), 1);
        let got = back[0].as_ref().unwrap();
        assert_eq!(got, &pin);
        assert_eq!(format_candidate(&got.candidate), format_candidate(&pin.candidate));
        remove_pin(&mut q, &pin.to_text());
        assert_eq!(q.get(CMP), None);
        assert!(Pin::parse("a~b~0~1~x").is_err());
    }
}
