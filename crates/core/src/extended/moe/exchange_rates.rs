//! The rates the expert exchange's kernels reach, from their published measurements
//! (`data/moe-exchange-rates.json`, every figure with its source), as shares of each link's line
//! rate: NCCL's all-to-all (Megatron's `alltoall` dispatcher, torchtitan's) and DeepEP's kernels
//! (the hierarchical dispatchers; their figures are [`super::dispatch`]'s `DEEPEP_*`).
//!
//! NCCL: on NVLink the protocol costs about 20 %: 370 of H100's 450 GB/s per direction, seen as
//! the bus bandwidth of every collective but the NVLS all-reduce (NVIDIA/nccl-tests issue #212,
//! sjeaugey, 2024-05-06); across nodes an all-to-all runs through each GPU's own NIC and reaches
//! 48–49 of a ConnectX-7 NDR NIC's 50 GB/s (nccl-tests issue #267, sjeaugey 2024-11-19 and
//! AddyLaddy 2025-01-23). Nothing here is fitted.
//!
//! **Not applied to the all-to-all dispatcher** (session 29, w129): extended mode prices NCCL's
//! all-to-all at the reference's 0.7 of each link (`Pricing::all_to_all`), below both published
//! shares. Priced at them instead (1.386× across nodes, 1.175× inside), the shipped MoE rows'
//! leave-one-source-out error rises 17.28 → 19.07 % (in-sample 17.28 → 18.42 %): the all-to-all
//! rows that come out too fast come out faster still (gpt-oss-120B on 64 B200 +1.7 → +25.4 %, on
//! B300 +49.6 → +74.9 %). What makes those rows too fast is not the exchange's bandwidth
//! (`data/moe-physics.md`, session 29).

/// NCCL's effective NVLink bandwidth on 8× H100 (collectives other than the NVLS all-reduce)
/// [GB/s].
pub const NCCL_NVLINK_EFFECTIVE_GBPS: f64 = 370.0;
/// H100's NVLink line rate per direction [GB/s].
pub const H100_NVLINK_LINE_GBPS: f64 = 450.0;
/// What NCCL's all-to-all reaches per CX-7 NDR NIC: the middle of the stated 48–49 [GB/s].
pub const NCCL_ALLTOALL_NIC_GBPS: f64 = 48.5;
/// A CX-7 NDR NIC's line rate, 400 Gb/s [GB/s].
pub const NDR_NIC_LINE_GBPS: f64 = 50.0;

/// NCCL all-to-all's share of each link's line rate: (across domains, inside a domain) =
/// (48.5/50, 370/450) = (0.97, 0.8222).
pub fn nccl_all_to_all_shares() -> (f64, f64) {
    (NCCL_ALLTOALL_NIC_GBPS / NDR_NIC_LINE_GBPS, NCCL_NVLINK_EFFECTIVE_GBPS / H100_NVLINK_LINE_GBPS)
}

#[cfg(test)]
mod tests {
    use super::super::dispatch::{DEEPEP_NVLINK_GBPS, DEEPEP_RDMA_GBPS, H800_LINKS_GBPS, deepep_link_shares};
    use super::*;
    use serde_json::Value;

    fn figures(id: &str) -> Value {
        let doc = crate::strict_json::parse(include_str!("../../../data/moe-exchange-rates.json")).unwrap();
        let list = doc["figures"].as_array().unwrap();
        list.iter().find(|f| f["id"] == id).unwrap_or_else(|| panic!("{id}")).clone()
    }

    fn num(v: &Value, key: &str) -> f64 {
        v[key].as_f64().unwrap_or_else(|| panic!("{key} in {v}"))
    }

    #[test]
    fn deepep_constants_are_the_data_files() {
        // DeepEP V1 normal kernels (docs/legacy.md): NVLink EP 8 153/158, RDMA EP 16/32/64
        // 43/43, 58/57, 51/50 GB/s, in that order in DEEPEP_RDMA_GBPS.
        let rows = figures("deepep_v1_normal")["rows"].as_array().unwrap().clone();
        let nvlink: Vec<_> = rows.iter().filter(|r| r["tier"] == "nvlink").collect();
        assert_eq!(nvlink.len(), 1);
        assert_eq!([num(nvlink[0], "dispatch_gbps"), num(nvlink[0], "combine_gbps")], DEEPEP_NVLINK_GBPS);
        let rdma: Vec<f64> = rows
            .iter()
            .filter(|r| r["tier"] == "rdma")
            .flat_map(|r| [num(r, "dispatch_gbps"), num(r, "combine_gbps")])
            .collect();
        assert_eq!(rdma, DEEPEP_RDMA_GBPS);
        assert_eq!(H800_LINKS_GBPS, (50.0, 200.0));
    }

    #[test]
    fn nccl_constants_are_the_data_files() {
        let nvlink = &figures("nccl_nvlink_effective")["rows"][0];
        assert_eq!(
            (num(nvlink, "line_gbps"), num(nvlink, "effective_gbps")),
            (H100_NVLINK_LINE_GBPS, NCCL_NVLINK_EFFECTIVE_GBPS)
        );
        let nic = &figures("nccl_alltoall_nic")["rows"][0];
        let mid = (num(nic, "effective_gbps_low") + num(nic, "effective_gbps_high")) / 2.0;
        assert_eq!((num(nic, "line_gbps"), mid), (NDR_NIC_LINE_GBPS, NCCL_ALLTOALL_NIC_GBPS));
    }

    #[test]
    fn the_published_shares_by_hand() {
        // NCCL: 48.5/50 = 0.97 across, 370/450 = 0.82222… inside.
        let (nic, nvlink) = nccl_all_to_all_shares();
        assert!((nic - 0.97).abs() < 1e-12 && (nvlink - 370.0 / 450.0).abs() < 1e-12);
        // The reference's 0.7 of each link, which extended mode's all-to-all keeps, is below both.
        let net = crate::catalog::Network::REFERENCE_DEFAULT;
        assert!(net.scale_out_eff < nic && net.scale_up_eff < nvlink);
        // DeepEP V1 inside an H800 node: (153 + 158)/2 / 200 = 0.7775 of the line rate; V2 on
        // SM100 (64 SMs): (726 + 740)/2 / 900 = 0.8144, the same ~0.8 as NCCL's 0.822 on H100.
        assert!((deepep_link_shares().1 - 0.7775).abs() < 1e-12);
        let v2 = &figures("deepep_v2")["rows"][3];
        assert_eq!((v2["arch"].as_str(), v2["tier"].as_str()), (Some("SM100"), Some("nvlink")));
        let share = (num(v2, "dispatch_gbps") + num(v2, "combine_gbps")) / 2.0 / 900.0;
        assert!((share - 733.0 / 900.0).abs() < 1e-12 && (share - nvlink).abs() < 0.01);
    }

    #[test]
    fn deepep_bandwidth_is_bytes_received_over_time() {
        // Low-latency kernels, EP 8, 128 tokens × top-8 × hidden 7,168: dispatch in FP8 with one
        // FP32 scale per 128 (1.03125 B per element) 7,569,408 B in 77 µs = 98.3 GB/s (98 stated),
        // combine in BF16 14,680,064 B in 114 µs = 128.8 GB/s (127 stated): the README's
        // bandwidth counts every copy of a token a GPU receives, as dispatch.rs's byte counts do.
        let row = &figures("deepep_v1_low_latency")["rows"][0];
        assert_eq!(num(row, "ep"), 8.0);
        let copies = 128.0 * 8.0 * 7168.0;
        let fp8 = copies * super::super::options::FP8_DISPATCH_BYTES;
        assert_eq!(fp8, 7_569_408.0);
        let gbps = |bytes: f64, us: f64| bytes / (us * 1e-6) * 1e-9;
        assert!((gbps(fp8, num(row, "dispatch_us")) / num(row, "dispatch_gbps") - 1.0).abs() < 0.01);
        assert!((gbps(copies * 2.0, num(row, "combine_us")) / num(row, "combine_gbps") - 1.0).abs() < 0.02);
    }
}
