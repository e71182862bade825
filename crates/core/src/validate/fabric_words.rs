//! The scale-out network of a run in words ("4 x 100 Gb/s RoCE per node", "8x 400 Gb/s
//! InfiniBand NDR per node", "EFA 3,200 Gbps per node", "400 Gb/s IB per GPU"), read as the
//! bandwidth per device [GB/s, one direction] that the catalog's `scale_out` figure holds.
//!
//! Rules: a clause (text between `;`, `,` or `.` outside numbers) counts only when it names a
//! scale-out fabric (RoCE, InfiniBand/IB/HDR/NDR, EFA, Ethernet, NIC, RDMA, Slingshot); its rate
//! is a number with a bit unit (`Gb`, `Gb/s`, `Gbps`, `Gbit`, `G`; `GB/s` is bytes and is a
//! scale-up figure, not read), times a count written before it (`4 x`, `8x`); the figure is per
//! node when the clause says "per node" (or names no unit of devices) and is divided by the
//! devices per node, per device when it says "per GPU"/"per device"/"per accelerator". Without
//! devices per node a per-node figure is not read.
//!
//! The fabric's kind ([`fabric_kind`]) is read from the same words: `EFA` → EFA, `RoCE` → RoCE,
//! `InfiniBand`/`IB` with `EDR`/`HDR`/`NDR`/`XDR` (or the generation alone) → InfiniBand of that
//! generation, `Slingshot`, `DCN`, `TCPX`/`TCPXO`; words that name two kinds (`RoCE / InfiniBand`)
//! give none.

use crate::catalog::{FabricKind, IbGeneration};

/// A fabric the words name.
const FABRIC_WORDS: [&str; 10] =
    ["roce", "infiniband", "ib", "hdr", "ndr", "efa", "ethernet", "nic", "rdma", "slingshot"];

/// The scale-out bandwidth per device [GB/s] the words state, with `per_node` devices in a node.
pub fn scale_out_per_device_gbs(text: &str, per_node: Option<u64>) -> Option<f64> {
    // Thousands separators out ("3,200" → "3200"), then clauses.
    let chars: Vec<char> = text.chars().collect();
    let mut clean = String::with_capacity(text.len());
    for (i, c) in chars.iter().enumerate() {
        let digit = |j: Option<usize>| j.and_then(|j| chars.get(j)).is_some_and(char::is_ascii_digit);
        if *c == ',' && digit(i.checked_sub(1)) && digit(Some(i + 1)) {
            continue;
        }
        clean.push(if *c == '×' { 'x' } else { *c });
    }
    for clause in clean.split([';', ',', '(', ')']) {
        let lower = clause.to_ascii_lowercase();
        let tokens: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric()).filter(|t| !t.is_empty()).collect();
        if !tokens.iter().any(|t| FABRIC_WORDS.contains(t)) {
            continue;
        }
        let Some(gbit) = rate_gbit(clause) else { continue };
        let per_device = lower.contains("per gpu")
            || lower.contains("per device")
            || lower.contains("per accelerator")
            || lower.contains("/gpu");
        let gbs = gbit / 8.0;
        return if per_device { Some(gbs) } else { per_node.filter(|n| *n > 0).map(|n| gbs / n as f64) };
    }
    None
}

/// The kind of scale-out fabric the words name, when they name exactly one (see the module
/// documentation); [`fabric_kinds`] says which when they name several.
pub fn fabric_kind(text: &str) -> Option<FabricKind> {
    match fabric_kinds(text).as_slice() {
        [one] => Some(*one),
        _ => None,
    }
}

/// Every kind of scale-out fabric the words name, each once, in the order written; an
/// InfiniBand generation refines a bare `InfiniBand`, two generations are two kinds.
pub fn fabric_kinds(text: &str) -> Vec<FabricKind> {
    let lower = text.to_ascii_lowercase();
    let mut kinds: Vec<FabricKind> = Vec::new();
    for t in lower.split(|c: char| !c.is_ascii_alphanumeric()).filter(|t| !t.is_empty()) {
        let kind = match t {
            "efa" | "efav2" | "efav3" => FabricKind::Efa,
            "roce" | "rocev2" => FabricKind::Roce,
            "slingshot" => FabricKind::Slingshot,
            "dcn" => FabricKind::TpuDcn,
            "tcpx" | "tcpxo" => FabricKind::GpuDirectTcpx,
            "infiniband" | "ib" => FabricKind::InfiniBand(IbGeneration::Unstated),
            "edr" => FabricKind::InfiniBand(IbGeneration::Edr),
            "hdr" => FabricKind::InfiniBand(IbGeneration::Hdr),
            "ndr" => FabricKind::InfiniBand(IbGeneration::Ndr),
            "xdr" => FabricKind::InfiniBand(IbGeneration::Xdr),
            _ => continue,
        };
        match kinds.iter().position(|k| k.join(kind).is_some()) {
            Some(i) => kinds[i] = kinds[i].join(kind).unwrap_or(kind),
            None => kinds.push(kind),
        }
    }
    kinds
}

/// Devices per node the words state: `8 per node`, `8 GPUs/host`, `8 GPUs per node`, `8 x A100`
/// before a part name is not read (it may be the whole run). `None` when not stated.
pub fn devices_per_node(text: &str) -> Option<u64> {
    let lower = text.to_ascii_lowercase();
    let tokens: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric()).filter(|t| !t.is_empty()).collect();
    for (i, t) in tokens.iter().enumerate() {
        let Ok(n) = t.parse::<u64>() else { continue };
        let next: Vec<&str> = tokens.iter().skip(i + 1).take(3).copied().collect();
        let unit = |w: &str| matches!(w, "gpu" | "gpus" | "device" | "devices" | "accelerators");
        let per_node = match next.as_slice() {
            ["per", "node" | "host" | "server", ..] => true,
            [u, "per" | "a", "node" | "host" | "server"] | [u, "node" | "host" | "server", ..] => unit(u),
            _ => false,
        };
        if per_node && n > 0 {
            return Some(n);
        }
    }
    None
}

/// The rate of a clause in Gb/s: the first number with a bit unit, times a count before it.
fn rate_gbit(clause: &str) -> Option<f64> {
    let b = clause.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() || (i > 0 && (b[i - 1].is_ascii_alphanumeric() && b[i - 1] != b'x')) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
            i += 1;
        }
        let value: f64 = clause[start..i].parse().ok()?;
        let rest = clause[i..].trim_start();
        // A count: `4 x 100`, `8x400`.
        if let Some(after) = rest.strip_prefix(['x', 'X'])
            && after.trim_start().starts_with(|c: char| c.is_ascii_digit())
        {
            let inner = rate_gbit(after.trim_start())?;
            return Some(value * inner);
        }
        let unit: String = rest.chars().take_while(|c| c.is_ascii_alphabetic() || *c == '/').collect();
        let bits = matches!(unit.as_str(), "Gb" | "Gb/s" | "Gbps" | "Gbit" | "Gbit/s" | "gbps" | "gbit" | "G" | "g")
            || unit.starts_with("Gbps")
            || unit.starts_with("Gb/");
        if bits {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_per_node_and_per_device() {
        // 4 x 100 Gb/s per node of 8 GPUs: 50 Gb/s = 6.25 GB/s per GPU.
        let internlm = "NVLink within node; 4 x 100 Gb/s RoCE per node between nodes";
        assert_eq!(scale_out_per_device_gbs(internlm, Some(8)), Some(6.25));
        assert_eq!(scale_out_per_device_gbs(internlm, None), None);
        // p5.48xlarge: 3,200 Gbps EFA per node of 8: 400 Gb/s = 50 GB/s.
        assert_eq!(scale_out_per_device_gbs("EFA 3,200 Gbps per node", Some(8)), Some(50.0));
        assert_eq!(scale_out_per_device_gbs("8x400G InfiniBand NDR", Some(8)), Some(50.0));
        assert_eq!(scale_out_per_device_gbs("400 Gb/s IB per GPU", None), Some(50.0));
        // Bytes are a scale-up figure; no fabric named, nothing read.
        assert_eq!(scale_out_per_device_gbs("NVLink (A800: 400 GB/s) single node", Some(8)), None);
        assert_eq!(scale_out_per_device_gbs("NVLink/NVSwitch (single node)", Some(8)), None);
    }

    #[test]
    fn fabric_kinds_as_written() {
        assert_eq!(fabric_kind("EFA 3,200 Gbps per node"), Some(FabricKind::Efa));
        assert_eq!(fabric_kind("4 x 100 Gb/s RoCE per node"), Some(FabricKind::Roce));
        assert_eq!(fabric_kind("8x 400 Gb/s InfiniBand NDR per node"), Some(FabricKind::InfiniBand(IbGeneration::Ndr)));
        assert_eq!(fabric_kind("400 Gb/s IB per GPU"), Some(FabricKind::InfiniBand(IbGeneration::Unstated)));
        assert_eq!(fabric_kind("HDR InfiniBand, 8 HCAs"), Some(FabricKind::InfiniBand(IbGeneration::Hdr)));
        // Two kinds named: none read; both listed.
        assert_eq!(fabric_kind("RoCE (24K-GPU cluster) / InfiniBand"), None);
        assert_eq!(
            fabric_kinds("RoCE (24K-GPU cluster) / InfiniBand"),
            [FabricKind::Roce, FabricKind::InfiniBand(IbGeneration::Unstated)]
        );
        assert_eq!(fabric_kind("NVLink/NVSwitch (single node)"), None);
        assert_eq!(fabric_kind("100 GbE Ethernet"), None);
    }

    #[test]
    fn devices_per_node_as_written() {
        assert_eq!(devices_per_node("NVIDIA A100-SXM4-80GB, 8 per node, 4 x 100 Gb RoCE per node"), Some(8));
        assert_eq!(devices_per_node("H100 SXM 96GB (Grand Teton), 8 GPUs/host, NVLink"), Some(8));
        assert_eq!(devices_per_node("4 GPUs per node (GB200 compute tray)"), Some(4));
        assert_eq!(devices_per_node("8 x A800-SXM4-80GB, single node"), None);
    }
}
