//! Reading and writing a system document (`"kind": "system"`), and the system's cross-field rules.
//! The fields mirror the accelerator entries of the hardware catalog, so a catalog entry is a valid
//! system document once `schema_version` and `kind` are added.

use serde_json::{Map, Value};

use super::model_doc::{read_field_sources, write_field_sources};
use crate::Error;
use crate::catalog::{
    Architecture, CatalogSystem, Fabric, FabricKind, Host, MeasuredMatmul, Network, PeakRates, ScaleOut, ScaleUp,
};
use crate::schema::check::{Fields, Problems, failed, walk};
use crate::schema::emit::J;
use crate::schema::fields::SCHEMA_VERSION;
use crate::schema::reference::{preset_json, read_reference_system};
use crate::schema::system_fields::SYSTEM_FIELDS;

/// What a system's `value_kind` may say its numbers are.
pub const VALUE_KINDS: [&str; 5] = ["vendor_claimed_peak", "as_deployed", "measured", "user", "reference_system_file"];

/// The physical rules between a system's numbers that no single field shows: a measured matmul
/// ceiling is at most the peak at its precision (a ceiling above it is a typo or the sparse
/// figure), the memory a device reports is at least the capacity it is sold with (a label of
/// "80 GB" is usually 80 GiB, which the driver reports as 85.9 GB), and `value_kind` is one of
/// [`VALUE_KINDS`].
fn plausible_ceilings_and_memory(f: &Fields, prefix: &str, report: &mut Problems, start: usize) {
    let p = |name: &str| format!("{prefix}{name}");
    let ok = |report: &Problems, name: &str| !failed(report, start, &p(name));
    if let (Some(m), Some(pk)) = (f.obj("measured_matmul_tflops"), f.obj("peak_tflops")) {
        for precision in ["bf16", "fp8"] {
            let field = format!("measured_matmul_tflops.{precision}");
            if let (Some(ceiling), Some(peak)) = (m.num(precision), pk.num(precision))
                && ceiling > peak
                && ok(report, &field)
            {
                report.error(
                    Error::invalid(
                        p(&field),
                        ceiling,
                        format!("a measured ceiling must not exceed the peak peak_tflops.{precision} = {peak}"),
                    )
                    .with_hint("vendor sheets often list sparse figures, twice the dense peak; give the dense peak"),
                );
            }
        }
    }
    if let (Some(label), Some(device)) = (f.num("memory_gb"), f.num("memory_device_gb"))
        && device < label
        && ok(report, "memory_device_gb")
    {
        report.error(
            Error::invalid(
                p("memory_device_gb"),
                device,
                format!("the memory a device reports must be at least its capacity memory_gb = {label}"),
            )
            .with_hint("an \"80GB\" part is usually 80 GiB: the driver reports 85.9 GB (GB = 1e9 bytes)"),
        );
    }
    if let Some(kind) = f.text("value_kind")
        && !VALUE_KINDS.contains(&kind.as_str())
        && ok(report, "value_kind")
    {
        report.error(Error::invalid(p("value_kind"), kind, format!("must be one of {}", VALUE_KINDS.join(", "))));
    }
}

/// Reads a system object; `prefix` goes before every path in messages (`"system."` inside a
/// scenario). Returns the system when no error was found.
pub(crate) fn read_system(
    obj: &Map<String, Value>,
    prefix: &str,
    envelope_keys: &[&str],
    report: &mut Problems,
) -> Option<CatalogSystem> {
    let start = report.errors.len();
    walk(SYSTEM_FIELDS, "", obj, prefix, envelope_keys, report);
    let f = Fields::from_map(obj);
    let p = |name: &str| format!("{prefix}{name}");
    let ok = |report: &Problems, name: &str| !failed(report, start, &p(name));

    let preset = match obj.get("preset").and_then(Value::as_object) {
        Some(po) if ok(report, "preset") => read_reference_system(po, &p("preset."), report),
        _ => None,
    };
    let peaks = f.obj("peak_tflops").map(|o| PeakRates {
        bf16: o.num("bf16"),
        fp16: o.num("fp16"),
        fp8: o.num("fp8"),
        tf32: o.num("tf32"),
        fp32_matrix: o.num("fp32_matrix"),
        fp32_vector: o.num("fp32_vector"),
        fp16_vector: o.num("fp16_vector"),
        fp64: o.num("fp64"),
        fp4: o.num("fp4"),
    });
    let su = f.obj("scale_up");
    let so = f.obj("scale_out");
    if let Some(su) = su {
        let (uni, bi) = (su.num("bw_per_device_unidir_gbps"), su.num("bw_per_device_bidir_gbps"));
        if let (Some(u), Some(b)) = (uni, bi)
            && b < u
            && ok(report, "scale_up.bw_per_device_bidir_gbps")
            && ok(report, "scale_up.bw_per_device_unidir_gbps")
        {
            report.error(
                Error::invalid(
                    p("scale_up.bw_per_device_bidir_gbps"),
                    b,
                    format!("must be at least the unidirectional {u}"),
                )
                .with_hint("bidirectional = both directions summed, usually twice the unidirectional figure"),
            );
        }
        if let (Some(pp), Some(u)) = (su.num("p2p_bw_unidir_gbps"), uni)
            && pp > u
            && ok(report, "scale_up.p2p_bw_unidir_gbps")
        {
            report.error(
                Error::invalid(p("scale_up.p2p_bw_unidir_gbps"), pp, format!("must not exceed the per-device {u}"))
                    .with_hint("one link cannot carry more than all links of the device"),
            );
        }
    }
    if let Some(so) = so
        && let (Some(gbit), Some(gbps)) = (so.num("nic_gbit_per_device"), so.num("nic_gbps_per_device"))
        && (gbit / 8.0 - gbps).abs() > 0.01 * gbps
    {
        report.warn(
            Error::invalid(
                p("scale_out.nic_gbps_per_device"),
                gbps,
                format!("differs from nic_gbit_per_device / 8 = {}", gbit / 8.0),
            )
            .with_hint("the model uses nic_gbps_per_device"),
        );
    }
    plausible_ceilings_and_memory(&f, prefix, report, start);
    if let Some(pk) = peaks {
        for (vec, mat, name) in
            [(pk.fp16_vector, pk.fp16.or(pk.bf16), "fp16_vector"), (pk.fp32_vector, pk.fp32_matrix, "fp32_vector")]
        {
            if let (Some(v), Some(m)) = (vec, mat)
                && v > m
            {
                report.warn(
                    Error::invalid(p(&format!("peak_tflops.{name}")), v, format!("exceeds the matrix rate {m}"))
                        .with_hint("vector units are normally slower than matrix units; check the two are not swapped"),
                );
            }
        }
    }
    if report.errors.len() > start {
        return None;
    }
    let id = f.text("id").unwrap_or_default();
    let net = f.obj("network");
    let d = Network::REFERENCE_DEFAULT;
    Some(CatalogSystem {
        name: f.text("name").unwrap_or_else(|| id.clone()),
        vendor: f.text("vendor"),
        form_factor: f.text("form_factor"),
        value_kind: f.text("value_kind"),
        architecture: f.text("architecture").and_then(|s| Architecture::from_name(&s)).unwrap_or(Architecture::Gpu),
        model_fit: f.text("model_fit"),
        peak_tflops: peaks.unwrap_or_default(),
        measured_matmul_tflops: f.obj("measured_matmul_tflops").map(|m| MeasuredMatmul {
            bf16: m.num("bf16"),
            fp8: m.num("fp8"),
            source: m.text("source"),
            note: m.text("note"),
        }),
        memory_gb: f.num("memory_gb"),
        memory_device_gb: f.num("memory_device_gb"),
        memory_type: f.text("memory_type"),
        memory_bw_gbps: f.num("memory_bw_gbps"),
        on_chip_sram_mb: f.num("on_chip_sram_mb"),
        on_chip_sram_note: f.text("on_chip_sram_note"),
        scale_up: su
            .map(|s| ScaleUp {
                tech: s.text("tech"),
                bw_per_device_unidir_gbps: s.num("bw_per_device_unidir_gbps"),
                bw_per_device_bidir_gbps: s.num("bw_per_device_bidir_gbps"),
                p2p_bw_unidir_gbps: s.num("p2p_bw_unidir_gbps"),
                domain_size: s.int("domain_size").unwrap_or(1),
                topology: s.text("topology"),
                links_per_device: s.int("links_per_device"),
                link_bw_unidir_gbps: s.num("link_bw_unidir_gbps"),
                torus_dimensions: s.int("torus_dimensions"),
                torus_shape: s.text("torus_shape"),
            })
            .unwrap_or_default(),
        scale_out: so
            .map(|s| ScaleOut {
                nic_gbit_per_device: s.num("nic_gbit_per_device"),
                nic_gbps_per_device: s.num("nic_gbps_per_device"),
                note: s.text("note"),
            })
            .unwrap_or_default(),
        network: Network {
            scale_up_eff: net.and_then(|n| n.num("scale_up_eff")).unwrap_or(d.scale_up_eff),
            scale_up_latency_s: net.and_then(|n| n.num("scale_up_latency_s")).unwrap_or(d.scale_up_latency_s),
            scale_out_eff: net.and_then(|n| n.num("scale_out_eff")).unwrap_or(d.scale_out_eff),
            scale_out_latency_s: net.and_then(|n| n.num("scale_out_latency_s")).unwrap_or(d.scale_out_latency_s),
        },
        // A file's own `network.scale_out_*`, edited away from the reference default, fills a
        // figure its fabric leaves out (a copy of an entry whose network was edited keeps the
        // edit in extended mode; the default, which every written file states, fills nothing).
        fabric: f.obj("fabric").map(|o| Fabric {
            kind: o.text("kind").and_then(|k| FabricKind::from_name(&k)),
            nics_per_node: o.int("nics_per_node"),
            gbit_per_nic: o.num("gbit_per_nic"),
            latency_s: o.num("latency_s").or(edited(net, "scale_out_latency_s", d.scale_out_latency_s)),
            achievable: o.num("achievable").or(edited(net, "scale_out_eff", d.scale_out_eff)),
            rail_optimised: o.bool("rail_optimised"),
            oversubscription: o.num("oversubscription"),
        }),
        host: f
            .obj("host")
            .map(|h| Host {
                cpu: h.text("cpu"),
                op_time_factor: h.num("op_time_factor"),
                link_gbps_per_direction: h.num("link_gbps_per_direction"),
            })
            .unwrap_or_default(),
        tdp_w: f.num("tdp_w"),
        vendor_headline_peak: f.text("vendor_headline_peak"),
        preset,
        sources: f.texts("sources"),
        notes: f.notes("notes"),
        aliases: f.texts("aliases"),
        field_sources: read_field_sources(f, SYSTEM_FIELDS),
        id,
    })
}

/// The figure `key` of a `network` object when it differs from the reference default `default`.
fn edited(net: Option<Fields>, key: &str, default: f64) -> Option<f64> {
    net.and_then(|n| n.num(key)).filter(|v| *v != default)
}

/// Writes a system object; with `envelope`, `schema_version` and `kind` come first.
pub(crate) fn write_system(s: &CatalogSystem, envelope: bool) -> J {
    let mut j = J::obj();
    if envelope {
        j = j.put("schema_version", J::Int(SCHEMA_VERSION)).put("kind", J::Str("system".into()));
    }
    let mut peaks = J::obj();
    for (k, v) in s.peak_tflops.entries() {
        peaks = peaks.put(k, J::num(v));
    }
    let mm = match &s.measured_matmul_tflops {
        None => J::Null,
        Some(m) => J::obj()
            .put("bf16", J::num(m.bf16))
            .put("fp8", J::num(m.fp8))
            .put("source", J::text(m.source.as_deref()))
            .put("note", J::text(m.note.as_deref())),
    };
    let su = &s.scale_up;
    let so = &s.scale_out;
    let n = &s.network;
    let j = j
        .put("id", J::Str(s.id.clone()))
        .put("name", J::Str(s.name.clone()))
        .put_some("vendor", s.vendor.as_deref().map(|v| J::Str(v.into())))
        .put_some("form_factor", s.form_factor.as_deref().map(|v| J::Str(v.into())))
        .put_some("value_kind", s.value_kind.as_deref().map(|v| J::Str(v.into())))
        .put("architecture", J::Str(s.architecture.as_str().into()))
        .put("model_fit", J::text(s.model_fit.as_deref()))
        .put("peak_tflops", peaks)
        .put("measured_matmul_tflops", mm)
        .put("memory_gb", J::num(s.memory_gb))
        .put_some("memory_device_gb", s.memory_device_gb.map(J::Num))
        .put("memory_type", J::text(s.memory_type.as_deref()))
        .put("memory_bw_gbps", J::num(s.memory_bw_gbps))
        .put("on_chip_sram_mb", J::num(s.on_chip_sram_mb))
        .put("on_chip_sram_note", J::text(s.on_chip_sram_note.as_deref()))
        .put(
            "scale_up",
            J::obj()
                .put("tech", J::text(su.tech.as_deref()))
                .put("bw_per_device_unidir_gbps", J::num(su.bw_per_device_unidir_gbps))
                .put("bw_per_device_bidir_gbps", J::num(su.bw_per_device_bidir_gbps))
                .put("p2p_bw_unidir_gbps", J::num(su.p2p_bw_unidir_gbps))
                .put("domain_size", J::Int(su.domain_size))
                .put("topology", J::text(su.topology.as_deref()))
                .put_some("links_per_device", su.links_per_device.map(J::Int))
                .put_some("link_bw_unidir_gbps", su.link_bw_unidir_gbps.map(J::Num))
                .put_some("torus_dimensions", su.torus_dimensions.map(J::Int))
                .put_some("torus_shape", su.torus_shape.as_deref().map(|t| J::Str(t.into()))),
        )
        .put(
            "scale_out",
            J::obj()
                .put("nic_gbit_per_device", J::num(so.nic_gbit_per_device))
                .put("nic_gbps_per_device", J::num(so.nic_gbps_per_device))
                .put("note", J::text(so.note.as_deref())),
        )
        .put(
            "network",
            J::obj()
                .put("scale_up_eff", J::Num(n.scale_up_eff))
                .put("scale_up_latency_s", J::Num(n.scale_up_latency_s))
                .put("scale_out_eff", J::Num(n.scale_out_eff))
                .put("scale_out_latency_s", J::Num(n.scale_out_latency_s)),
        )
        .put_some(
            "fabric",
            s.fabric.map(|fb| {
                J::obj()
                    .put_some("kind", fb.kind.map(|k| J::Str(k.name().into())))
                    .put_some("nics_per_node", fb.nics_per_node.map(J::Int))
                    .put_some("gbit_per_nic", fb.gbit_per_nic.map(J::Num))
                    .put_some("latency_s", fb.latency_s.map(J::Num))
                    .put_some("achievable", fb.achievable.map(J::Num))
                    .put_some("rail_optimised", fb.rail_optimised.map(J::Bool))
                    .put_some("oversubscription", fb.oversubscription.map(J::Num))
            }),
        )
        .put_some(
            "host",
            (s.host != Host::default()).then(|| {
                J::obj()
                    .put("cpu", J::text(s.host.cpu.as_deref()))
                    .put("op_time_factor", J::num(s.host.op_time_factor))
                    .put_some("link_gbps_per_direction", s.host.link_gbps_per_direction.map(J::Num))
            }),
        )
        .put("tdp_w", J::num(s.tdp_w))
        .put("vendor_headline_peak", J::text(s.vendor_headline_peak.as_deref()))
        .put_some("preset", s.preset.as_ref().map(preset_json))
        .put("sources", J::texts(&s.sources))
        .put("notes", J::texts(&s.notes))
        .put_some("aliases", (!s.aliases.is_empty()).then(|| J::texts(&s.aliases)));
    write_field_sources(j, &s.field_sources)
}
