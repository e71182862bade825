//! The scale-out fabric of a system: which network joins its nodes (InfiniBand of a generation,
//! RoCE, AWS EFA, Google's TPU data-centre network, GPUDirect-TCPX, HPE Slingshot), its NICs, the
//! latency of one network step, the fraction of the NIC bandwidth collectives achieve, whether the
//! fabric is rail-optimised and how oversubscribed its upper tier is.
//!
//! A system states its fabric in its `fabric` object (catalog entries from their sources, a user's
//! system file), a run states it in words (`EFA 3,200 Gbps per node`, read by
//! `validate::fabric_words`) or through a named instance (`p5.48xlarge`: EFA), and a user gives
//! it in the system spec (`nvidia_h100_sxm5_80gb,fabric=efa,fabric_latency_us=20,oversub=2`).
//!
//! **Who reads it.** Extended mode prices its scale-out tier with the fabric
//! (`extended::hardware::Hardware`): bandwidth per NIC `B_ib · achievable / oversubscription`
//! ([`Fabric::effective_gbps`]), the latency of an NCCL network step — which replaces NCCL's own
//! network `hwLat` when the fabric states one ([`Fabric::step_latency_s`],
//! `extended::latency::collective_on_fabric_s`) — and the hop latency of the reference-style
//! collectives (all-to-all, torus parts; [`Fabric::latency_s`]). Reference mode keeps the published
//! model's `ib_eff`/`ib_latency` (`network.scale_out_eff`, `network.scale_out_latency_s`): the
//! fabric never reaches it.
//!
//! **Defaults per kind** ([`FabricKind::defaults`]): achievable 0.7 (the reference's `ib_eff`)
//! for every kind; the latency is NCCL's network table for NCCL collectives and the reference's
//! 5 µs hop for the rest, except EFA's NCCL network step ([`EFA_NCCL_STEP_S`], measured). NCCL's
//! own cost model uses one network latency table for every fabric kind (NVIDIA/nccl
//! `src/graph/tuning.cc` at 01afd20, `hwLat[NCCL_HW_NET]`, Ring LL/LL128/Simple 2.7/4.0/9.6 µs and
//! Tree 5.0/8.5/50 µs per inter-node step), so no kind-specific latency comes from NCCL; EFA's
//! comes from nccl-tests runs on p5.48xlarge (see the constant). A user or a run that knows its
//! fabric's figure states it (`fabric_latency_us=20`), which wins over the kind's.
//!
//! **EFA checked against all-reduces** (session 31): with its measured step and the assumed 0.7,
//! EFA prices the all-reduces of the benchmark its step comes from (crazyguitar/
//! aws-gpu-communication-benchmark @ fd167f9, `data/nccl_all_reduce.csv`: p5.48xlarge, 2–32 nodes,
//! 32 MiB–8 GiB) within −31 % and +72 %, geometric mean +6 % (`tests/fabric.rs`,
//! `efa_all_reduce_against_nccl_tests_on_p5`); the achievable fraction that would fit those
//! all-reduces and the all-gathers best lies between 0.75 and 0.8, above the default, so the
//! default stays the reference's 0.7 (a user states `fabric_eff=` for their own fabric). No
//! published measurement covers 64 nodes (512 ranks); there NCCL's tree (6 network levels) beats
//! the ring (126 network steps of 68.3 µs) by ten times for a gradient bucket, and fmperf prices
//! the tree as NCCL's tuner picks it.

use crate::Error;

/// A generation of InfiniBand: the signalling rate of one 4x port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IbGeneration {
    /// EDR: 100 Gb/s per 4x port.
    Edr,
    /// HDR: 200 Gb/s per 4x port.
    Hdr,
    /// NDR: 400 Gb/s per 4x port.
    Ndr,
    /// XDR: 800 Gb/s per 4x port.
    Xdr,
    /// The words say InfiniBand without a generation.
    Unstated,
}

/// The kind of network that joins the nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FabricKind {
    /// InfiniBand (NVIDIA ConnectX HCAs and Quantum switches).
    InfiniBand(IbGeneration),
    /// RDMA over Converged Ethernet (RoCE v2).
    Roce,
    /// AWS Elastic Fabric Adapter (SRD transport, NCCL through aws-ofi-nccl).
    Efa,
    /// Google's data-centre network between TPU slices (multislice over DCN).
    TpuDcn,
    /// Google Cloud GPUDirect-TCPX / TCPXO (A3 High, A3 Mega).
    GpuDirectTcpx,
    /// HPE Slingshot.
    Slingshot,
    /// Another or an unnamed fabric (plain Ethernet, vendor links).
    Other,
}

/// The default figures of a fabric kind and where they come from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FabricDefaults {
    /// Latency of one network step [s]; `None`: no figure of the kind's own (NCCL's network
    /// `hwLat` table for NCCL collectives, the system's `network.scale_out_latency_s` for the rest).
    pub latency_s: Option<f64>,
    /// Latency of one network step of an NCCL ring or tree [s] measured on the kind, for NCCL's
    /// collectives only (all-to-all and the reference-style hops keep [`Self::latency_s`]);
    /// `None`: [`Self::latency_s`].
    pub nccl_step_s: Option<f64>,
    /// Fraction of the NIC bandwidth collectives achieve (0, 1].
    pub achievable: f64,
    /// The source of the two figures, or `assumed: …`.
    pub source: &'static str,
}

/// Today's figures for every kind (see the module documentation).
const ASSUMED: FabricDefaults = FabricDefaults {
    latency_s: None,
    nccl_step_s: None,
    achievable: 0.7,
    source: "assumed: no figure per kind; the latency stays NCCL's network hwLat (NVIDIA/nccl src/graph/tuning.cc \
             at 01afd20, Ring 2.7/4.0/9.6 us for LL/LL128/Simple, one table for every fabric kind) and the \
             reference's 5e-6 s hop, the achievable fraction the reference's ib_eff 0.7",
};

/// Latency of one network step of an NCCL collective on AWS EFA [s] (p5.48xlarge: 32 EFA NICs of
/// 100 Gb/s per node of 8 H100), a least-squares figure of fmperf's own ring model on measured
/// all-gathers. **Source:** crazyguitar/aws-gpu-communication-benchmark @ fd167f9,
/// `data/nccl_all_gather.csv` (nccl-tests `all_gather_perf`, p5.48xlarge, EFA): 32 MiB
/// (0.033554 GB) all-gathered over `N` = 2, 4, 8, 16 and 32 nodes of 8 GPUs at an algorithm
/// bandwidth of 140.06, 86.25, 47.03, 25.10 and 12.43 GB/s, i.e. in 0.2396, 0.3890, 0.7135,
/// 1.3368 and 2.6995 ms. fmperf's ring over `n = 8N` ranks with NCCL's LL128 protocol
/// ([`crate::extended::latency`]): 10 µs + (n − N)·1.9 µs (NVLink steps) + (N − 1)·`L` (network
/// steps) + the bandwidth term 0.033554 GB·(n − 1)/n ÷ (8 NICs × 50 GB/s × 0.7 = 280 GB/s) ÷ 15/16
/// = 119.8, 123.8, 125.9, 126.8 and 127.4 µs. What is left for the network steps, 83.1, 202.0,
/// 471.2, 987.2 and 2,136.5 µs over 1, 3, 7, 15 and 31 steps, gives `L` = Σ(N−1)·y / Σ(N−1)² =
/// 85,029 / 1,245 = 68.3 µs (each node count alone: 83, 67, 67, 66, 69 µs), seven times NCCL's
/// 9.6 µs (Simple) for InfiniBand. With it fmperf's collective (the least over the protocols)
/// gives 0.225, 0.392, 0.720, 1.319 and 2.465 ms: −6 % to +1 %, −9 % at 32 nodes. Not fitted on
/// any training run.
pub const EFA_NCCL_STEP_S: f64 = 68.3e-6;

/// EFA: [`ASSUMED`] but for its measured NCCL network step ([`EFA_NCCL_STEP_S`]).
const EFA: FabricDefaults = FabricDefaults {
    nccl_step_s: Some(EFA_NCCL_STEP_S),
    source: "NCCL network step 68.3 us: nccl-tests all_gather on p5.48xlarge (crazyguitar/\
             aws-gpu-communication-benchmark @ fd167f9, data/nccl_all_gather.csv, 2-32 nodes); \
             achievable 0.7 (the reference's ib_eff) and the reference's 5e-6 s hop assumed",
    ..ASSUMED
};

/// The names a fabric kind is written with in files and specs, with the kind.
const KIND_NAMES: [(&str, FabricKind); 10] = [
    ("infiniband", FabricKind::InfiniBand(IbGeneration::Unstated)),
    ("infiniband_edr", FabricKind::InfiniBand(IbGeneration::Edr)),
    ("infiniband_hdr", FabricKind::InfiniBand(IbGeneration::Hdr)),
    ("infiniband_ndr", FabricKind::InfiniBand(IbGeneration::Ndr)),
    ("infiniband_xdr", FabricKind::InfiniBand(IbGeneration::Xdr)),
    ("roce", FabricKind::Roce),
    ("efa", FabricKind::Efa),
    ("tpu_dcn", FabricKind::TpuDcn),
    ("gpudirect_tcpx", FabricKind::GpuDirectTcpx),
    ("slingshot", FabricKind::Slingshot),
];

impl FabricKind {
    /// The kind a name of [`crate::schema::fields::FABRIC_KIND_NAMES`] gives (`ib`, `ib_ndr` and `ndr` are accepted for
    /// InfiniBand); `None` for an unknown name.
    pub fn from_name(name: &str) -> Option<FabricKind> {
        let n = name.trim().to_ascii_lowercase().replace(['-', ' '], "_");
        let n = n.strip_prefix("ib_").map(|g| format!("infiniband_{g}")).unwrap_or(n);
        let n = match n.as_str() {
            "ib" => "infiniband".to_string(),
            "edr" | "hdr" | "ndr" | "xdr" => format!("infiniband_{n}"),
            "dcn" => "tpu_dcn".to_string(),
            "tcpx" | "tcpxo" => "gpudirect_tcpx".to_string(),
            _ => n,
        };
        if n == "other" {
            return Some(FabricKind::Other);
        }
        KIND_NAMES.iter().find(|(k, _)| *k == n).map(|(_, kind)| *kind)
    }

    /// The name files and specs use for the kind.
    pub fn name(self) -> &'static str {
        KIND_NAMES.iter().find(|(_, k)| *k == self).map_or("other", |(n, _)| n)
    }

    /// The one kind `self` and `other` both describe, the more precise one (a bare InfiniBand
    /// and InfiniBand NDR: NDR); `None` when they are two kinds (RoCE and EFA, HDR and NDR).
    pub fn join(self, other: FabricKind) -> Option<FabricKind> {
        let bare = FabricKind::InfiniBand(IbGeneration::Unstated);
        match (self, other) {
            (a, b) if a == b => Some(a),
            (a, FabricKind::InfiniBand(_)) if a == bare => Some(other),
            (FabricKind::InfiniBand(_), b) if b == bare => Some(self),
            _ => None,
        }
    }

    /// The kind's default latency per network step and achievable fraction, with their source.
    pub fn defaults(self) -> FabricDefaults {
        match self {
            FabricKind::Efa => EFA,
            _ => ASSUMED,
        }
    }
}

/// A system's scale-out fabric. Every figure is optional: an absent one is the kind's default
/// ([`FabricKind::defaults`]) or, without a kind, the system's `network` figure.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Fabric {
    /// The kind of network; `None`: not stated.
    pub kind: Option<FabricKind>,
    /// NICs of the fabric per node [count].
    pub nics_per_node: Option<u64>,
    /// Bandwidth of one NIC [Gb/s, one direction].
    pub gbit_per_nic: Option<f64>,
    /// Latency of one network step [s] (one inter-node hop of a ring or tree).
    pub latency_s: Option<f64>,
    /// Fraction of the NIC bandwidth collectives achieve (0, 1].
    pub achievable: Option<f64>,
    /// Whether each device's NIC sits on its own rail (a switch per local rank, as in NVIDIA's
    /// DGX SuperPOD). Recorded; the model does not price it (it would need the rail group's size).
    pub rail_optimised: Option<bool>,
    /// Oversubscription of the fabric's upper tier, `r` of `r:1` [×, ≥ 1; default 1]: scale-out
    /// traffic gets `1/r` of the NIC bandwidth (the worst case, every flow crossing the
    /// oversubscribed tier).
    pub oversubscription: Option<f64>,
}

impl Fabric {
    /// A fabric of a kind with every figure its default.
    pub fn of_kind(kind: FabricKind) -> Fabric {
        Fabric { kind: Some(kind), ..Fabric::default() }
    }

    /// This fabric's stated figures over `base`'s (a user's or a run's over the catalog's).
    pub fn over(self, base: Option<Fabric>) -> Fabric {
        let Some(b) = base else { return self };
        Fabric {
            kind: self.kind.or(b.kind),
            nics_per_node: self.nics_per_node.or(b.nics_per_node),
            gbit_per_nic: self.gbit_per_nic.or(b.gbit_per_nic),
            latency_s: self.latency_s.or(b.latency_s),
            achievable: self.achievable.or(b.achievable),
            rail_optimised: self.rail_optimised.or(b.rail_optimised),
            oversubscription: self.oversubscription.or(b.oversubscription),
        }
    }

    /// Latency of one network step [s] when the fabric or its kind gives one ([`Fabric::latency_s`]
    /// without the fallback): what replaces NCCL's network `hwLat` in extended mode.
    pub fn step_latency_s(&self) -> Option<f64> {
        let kind = self.kind.map(FabricKind::defaults);
        self.latency_s.or(kind.and_then(|d| d.nccl_step_s.or(d.latency_s)))
    }

    /// Latency of one network hop [s] of the reference-style collectives (all-to-all, torus
    /// parts): the stated figure, else the kind's hop default, else `network_latency_s` (the
    /// system's `network.scale_out_latency_s`). A kind's NCCL step ([`FabricDefaults::nccl_step_s`])
    /// is not a hop figure.
    pub fn latency_s(&self, network_latency_s: f64) -> f64 {
        self.latency_s.or(self.kind.and_then(|k| k.defaults().latency_s)).unwrap_or(network_latency_s)
    }

    /// Achievable fraction: the stated one, else the kind's default, else `network_eff`.
    pub fn achievable(&self, network_eff: f64) -> f64 {
        self.achievable.or(self.kind.map(|k| k.defaults().achievable)).unwrap_or(network_eff)
    }

    /// Oversubscription ratio [×], 1 when not stated.
    pub fn oversubscription(&self) -> f64 {
        self.oversubscription.unwrap_or(1.0)
    }

    /// Achievable scale-out bandwidth per NIC [GB/s, one direction] of a NIC of `nic_gbps`:
    /// `nic_gbps · achievable / oversubscription`.
    pub fn effective_gbps(&self, nic_gbps: f64, network_eff: f64) -> f64 {
        nic_gbps * self.achievable(network_eff) / self.oversubscription()
    }

    /// Checks the stated figures (a fabric built in code, not read through the schema or the
    /// spec, which check them too): an error names `fabric.<key>` and the rule.
    pub fn check(&self) -> Result<(), Error> {
        let bad = |key: &str, v: f64, rule: &str| Err(Error::invalid(format!("fabric.{key}"), v, rule.to_string()));
        if let Some(l) = self.latency_s.filter(|l| !(l.is_finite() && (0.0..=1.0).contains(l))) {
            return bad("latency_s", l, "must be a latency per network step in seconds, 0 to 1");
        }
        if let Some(a) = self.achievable.filter(|a| !(*a > 0.0 && *a <= 1.0)) {
            return bad("achievable", a, "must be a fraction in (0, 1]");
        }
        if let Some(o) = self.oversubscription.filter(|o| !(o.is_finite() && *o >= 1.0)) {
            return bad("oversubscription", o, "must be the ratio r of r:1, at least 1");
        }
        if let Some(g) = self.gbit_per_nic.filter(|g| !(g.is_finite() && *g > 0.0)) {
            return bad("gbit_per_nic", g, "must be a positive bandwidth in Gb/s");
        }
        Ok(())
    }

    /// NIC bandwidth per device [GB/s, one direction] when the fabric states its NICs per node
    /// and their rate: `nics_per_node · gbit_per_nic / 8 / devices_per_node`.
    pub fn nic_gbps_per_device(&self, devices_per_node: u64) -> Option<f64> {
        let (n, g) = (self.nics_per_node?, self.gbit_per_nic?);
        (devices_per_node > 0).then(|| n as f64 * g / 8.0 / devices_per_node as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::fields::FABRIC_KIND_NAMES;

    #[test]
    fn names_read_and_round_trip() {
        for name in FABRIC_KIND_NAMES {
            let kind = FabricKind::from_name(name).unwrap();
            assert_eq!(kind.name(), *name);
        }
        assert_eq!(FabricKind::from_name("IB-NDR"), Some(FabricKind::InfiniBand(IbGeneration::Ndr)));
        assert_eq!(FabricKind::from_name("ndr"), Some(FabricKind::InfiniBand(IbGeneration::Ndr)));
        assert_eq!(FabricKind::from_name("TCPXO"), Some(FabricKind::GpuDirectTcpx));
        assert_eq!(FabricKind::from_name("myrinet"), None);
    }

    #[test]
    fn stated_figures_win_over_kind_then_network() {
        // No kind: the system's network figures.
        assert_eq!(Fabric::default().latency_s(7e-6), 7e-6);
        // A kind: its default. None for the hop of any kind (the network figure); NCCL's table
        // for every kind's NCCL step but EFA's measured one.
        assert_eq!(Fabric::of_kind(FabricKind::Efa).latency_s(7e-6), 7e-6);
        assert_eq!(Fabric::of_kind(FabricKind::Efa).step_latency_s(), Some(EFA_NCCL_STEP_S));
        assert_eq!(Fabric::of_kind(FabricKind::Roce).step_latency_s(), None);
        // A stated figure: itself; a user's over the catalog's.
        let user = Fabric { latency_s: Some(20e-6), ..Fabric::default() };
        let f = user.over(Some(Fabric { oversubscription: Some(2.0), ..Fabric::of_kind(FabricKind::Efa) }));
        assert_eq!(f.kind, Some(FabricKind::Efa));
        assert_eq!(f.latency_s(5e-6), 20e-6);
        assert_eq!(f.step_latency_s(), Some(20e-6));
        // 50 GB/s NIC, 0.7 achievable, 2:1 → 17.5 GB/s.
        assert_eq!(f.effective_gbps(50.0, 0.7), 17.5);
    }

    #[test]
    fn per_device_from_nics_per_node() {
        // A node of 8 devices with 32 NICs of 100 Gb/s: 400 Gb/s = 50 GB/s per device.
        let p5 = Fabric { nics_per_node: Some(32), gbit_per_nic: Some(100.0), ..Fabric::of_kind(FabricKind::Efa) };
        assert_eq!(p5.nic_gbps_per_device(8), Some(50.0));
        assert_eq!(p5.nic_gbps_per_device(0), None);
    }

    #[test]
    fn bad_figures_are_named() {
        assert!(Fabric::of_kind(FabricKind::Roce).check().is_ok());
        for (f, key) in [
            (Fabric { oversubscription: Some(0.5), ..Fabric::default() }, "fabric.oversubscription"),
            (Fabric { achievable: Some(f64::NAN), ..Fabric::default() }, "fabric.achievable"),
            (Fabric { latency_s: Some(-1.0), ..Fabric::default() }, "fabric.latency_s"),
            (Fabric { gbit_per_nic: Some(0.0), ..Fabric::default() }, "fabric.gbit_per_nic"),
        ] {
            let e = f.check().unwrap_err().to_string();
            assert!(e.contains(key), "{e}");
        }
    }
}
