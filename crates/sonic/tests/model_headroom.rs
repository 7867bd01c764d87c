//! Headroom models: the sample table of sonic-buffer.md §4.5 (both columns), extra grid
//! points, and monotonicity properties.

use headroom_sonic::model::{
    Dsh, Generic, Headroom, HeadroomArgs, HeadroomEnv, HeadroomModel, Mellanox, Model,
};
use headroom_sonic::tables::state::AsicModel;
use proptest::prelude::*;

fn env(m: AsicModel, p: u32, shp: bool) -> HeadroomEnv {
    HeadroomEnv {
        small_packet_percentage: p,
        shp_enabled: shp,
        ..HeadroomEnv::new(m.params())
    }
}

fn mellanox(m: AsicModel, p: u32, shp: bool, args: &HeadroomArgs) -> Headroom {
    Mellanox.headroom(args, &env(m, p, shp)).expect("computes")
}

/// sonic-buffer.md §4.5: (ASIC, P, speed, cable, xoff no SHP, size no SHP, xoff SHP, size SHP).
#[test]
fn sample_table_4_5() {
    type Row = (AsicModel, u32, u64, f64, u64, u64, u64, u64);
    let rows: [Row; 7] = [
        (
            AsicModel::Spectrum1,
            50,
            10_000,
            5.0,
            19456,
            38912,
            17408,
            19456,
        ),
        (
            AsicModel::Spectrum1,
            50,
            100_000,
            300.0,
            84992,
            104448,
            82944,
            19456,
        ),
        (
            AsicModel::Spectrum2,
            50,
            100_000,
            5.0,
            48128,
            67584,
            46080,
            19456,
        ),
        (
            AsicModel::Spectrum3,
            50,
            400_000,
            40.0,
            112640,
            132096,
            110592,
            19456,
        ),
        (
            AsicModel::Spectrum4,
            50,
            100_000,
            5.0,
            49152,
            68608,
            47104,
            19456,
        ),
        (
            AsicModel::Spectrum6,
            50,
            800_000,
            40.0,
            168960,
            211968,
            166912,
            43008,
        ),
        (AsicModel::Vs, 100, 100_000, 5.0, 72704, 91136, 72704, 18432),
    ];
    for (m, p, speed, cable, xoff, size, xoff_shp, size_shp) in rows {
        let a = HeadroomArgs::new(speed, cable);
        let no = mellanox(m, p, false, &a);
        let yes = mellanox(m, p, true, &a);
        assert_eq!(
            (no.xoff, no.size),
            (xoff, size),
            "{m:?} {speed} {cable}m no SHP"
        );
        assert_eq!(
            (yes.xoff, yes.size),
            (xoff_shp, size_shp),
            "{m:?} {speed} {cable}m SHP"
        );
        assert_eq!(yes.size, yes.xon, "SHP: size = xon");
        assert_eq!(no.size, no.xon + no.xoff, "4 lanes: size = xon + xoff");
    }
}

/// sonic-buffer.md §4.4 through the plugin's string interface.
#[test]
fn worked_example_4_4_via_plugin_argv() {
    let a = HeadroomArgs::from_plugin_argv(["100000", "5m", "9100", "", "4"]).expect("argv");
    let h = mellanox(AsicModel::Spectrum3, 50, false, &a);
    assert_eq!(h.plugin_lines(), ["xon:19456", "xoff:48128", "size:67584"]);
    // SHP: step 9 skipped, xoff 2048 lower, size = xon.
    let h = mellanox(AsicModel::Spectrum3, 50, true, &a);
    assert_eq!(h.plugin_lines(), ["xon:19456", "xoff:46080", "size:19456"]);
}

/// Grid points outside the sample table (8 lanes, gearbox, odd MTU, fractional cable),
/// computed with an independent transcription of §4.3.
#[test]
fn other_grid_points() {
    type Case = (AsicModel, u32, bool, HeadroomArgs, (u64, u64, u64));
    let cases: [Case; 8] = [
        (
            AsicModel::Spectrum4,
            50,
            false,
            HeadroomArgs {
                lane_count: 8,
                ..HeadroomArgs::new(400_000, 5.0)
            },
            (38912, 98304, 146432),
        ),
        (
            AsicModel::Spectrum4,
            50,
            true,
            HeadroomArgs {
                lane_count: 8,
                ..HeadroomArgs::new(400_000, 5.0)
            },
            (38912, 96256, 38912),
        ),
        (
            AsicModel::Spectrum5,
            50,
            false,
            HeadroomArgs {
                lane_count: 8,
                ..HeadroomArgs::new(800_000, 5.0)
            },
            (38912, 108544, 156672),
        ),
        (
            AsicModel::Spectrum2,
            50,
            false,
            HeadroomArgs {
                gearbox_delay_ns: 400.0,
                ..HeadroomArgs::new(100_000, 40.0)
            },
            (19456, 65536, 84992),
        ),
        (
            AsicModel::Spectrum2,
            50,
            true,
            HeadroomArgs {
                gearbox_delay_ns: 400.0,
                ..HeadroomArgs::new(100_000, 40.0)
            },
            (19456, 63488, 19456),
        ),
        (
            AsicModel::Spectrum2,
            50,
            false,
            HeadroomArgs {
                port_mtu: 1500,
                ..HeadroomArgs::new(50_000, 5.0)
            },
            (19456, 18432, 37888),
        ),
        (
            AsicModel::Spectrum1,
            50,
            false,
            HeadroomArgs::new(25_000, 2.5),
            (19456, 20480, 39936),
        ),
        (
            AsicModel::Vs,
            50,
            false,
            HeadroomArgs::new(100_000, 5.0),
            (18432, 44032, 62464),
        ),
    ];
    for (m, p, shp, a, (xon, xoff, size)) in cases {
        let h = mellanox(m, p, shp, &a);
        assert_eq!(
            (h.xon, h.xoff, h.size),
            (xon, xoff, size),
            "{m:?} {a:?} shp {shp}"
        );
    }
}

/// With SHP every model reserves only xon per PG.
#[test]
fn shp_size_is_xon_for_every_model() {
    for model in ["mellanox", "generic", "dsh"] {
        let m: Model = model.parse().expect("model");
        for asic in AsicModel::ALL {
            let h = m
                .headroom(&HeadroomArgs::new(100_000, 40.0), &env(asic, 50, true))
                .expect("computes");
            assert_eq!(h.size, h.xon, "{model} {asic:?}");
        }
    }
}

/// SONiC's small-packet compensation (§4.3 step 9) is not monotone: when a longer cable or a
/// faster port pushes `FULL - XOFF` under the margin, the 2048 B disappear and xoff drops by
/// 1024 B. Reproduced on purpose (bit compatibility); found by the proptests below.
#[test]
fn compensation_breaks_monotonicity() {
    // Longer cable: Spectrum-6, 1G, 90 % small packets.
    let e = env(AsicModel::Spectrum6, 90, false);
    let a = Mellanox
        .headroom(&HeadroomArgs::new(1000, 1258.5), &e)
        .expect("a");
    let b = Mellanox
        .headroom(&HeadroomArgs::new(1000, 1259.0), &e)
        .expect("b");
    assert_eq!((a.xoff, b.xoff), (47104, 46080));
    // Faster port: VS, no small packets, lossless MTU 1500, port MTU 1500, 139.45 m.
    let e = HeadroomEnv {
        lossless_mtu: 1500,
        ..env(AsicModel::Vs, 0, false)
    };
    let slow = HeadroomArgs {
        port_mtu: 1500,
        ..HeadroomArgs::new(100, 139.448_587_749_807_96)
    };
    let fast = HeadroomArgs {
        speed_mbps: 1000,
        ..slow.clone()
    };
    let (a, b) = (
        Mellanox.headroom(&slow, &e).expect("a"),
        Mellanox.headroom(&fast, &e).expect("b"),
    );
    assert_eq!((a.xoff, a.size, b.xoff, b.size), (6144, 24576, 5120, 23552));
}

/// The speeds of the pause-quanta table, ascending.
const SPEEDS: [u64; 10] = [
    100, 1000, 10_000, 25_000, 40_000, 50_000, 100_000, 200_000, 400_000, 800_000,
];

fn any_asic() -> impl Strategy<Value = AsicModel> {
    prop::sample::select(AsicModel::ALL.to_vec())
}

fn monotone(a: &Headroom, b: &Headroom) -> bool {
    a.xon <= b.xon && a.xoff <= b.xoff && a.size <= b.size
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Mellanox: non-decreasing in cable length and in speed (over the pause-quanta speeds)
    /// whenever the small-packet compensation (step 9) is off: SHP on, or 100 % small packets.
    #[test]
    fn mellanox_monotone_without_compensation(
        asic in any_asic(), shp: bool, lm in prop::sample::select(vec![1024u32, 1500, 4096, 9100]),
        mtu in prop::sample::select(vec![1500u32, 9100]), lanes in prop::sample::select(vec![0u32, 4, 8]),
        i in 0usize..9, l1 in 0.0f64..3000.0, dl in 0.0f64..500.0, gearbox in prop::sample::select(vec![0.0f64, 400.0]),
    ) {
        let p = if shp { 50 } else { 100 };
        let e = HeadroomEnv { lossless_mtu: lm, small_packet_percentage: p, shp_enabled: shp, ..HeadroomEnv::new(asic.params()) };
        let a = HeadroomArgs { port_mtu: mtu, lane_count: lanes, gearbox_delay_ns: gearbox, ..HeadroomArgs::new(SPEEDS[i], l1) };
        let longer = HeadroomArgs { cable_m: l1 + dl, ..a.clone() };
        let faster = HeadroomArgs { speed_mbps: SPEEDS[i + 1], ..a.clone() };
        let h = Mellanox.headroom(&a, &e).expect("a");
        let hl = Mellanox.headroom(&longer, &e).expect("longer");
        let hf = Mellanox.headroom(&faster, &e).expect("faster");
        prop_assert!(monotone(&h, &hl), "cable: {:?} -> {:?}", h, hl);
        prop_assert!(monotone(&h, &hf), "speed: {:?} -> {:?}", h, hf);
    }

    /// Mellanox: non-decreasing in cable length and in speed with SONiC's defaults (P 50,
    /// lossless MTU 1024, port MTU 9100), compensation included. Outside these defaults the
    /// compensation can make xoff drop by 1024 B when the cable or the speed grows (see
    /// `compensation_breaks_monotonicity`).
    #[test]
    fn mellanox_monotone_with_defaults(
        asic in any_asic(), lanes in prop::sample::select(vec![0u32, 4, 8]),
        i in 0usize..9, l1 in 0.0f64..3000.0, dl in 0.0f64..500.0,
    ) {
        let e = env(asic, 50, false);
        let a = HeadroomArgs { lane_count: lanes, ..HeadroomArgs::new(SPEEDS[i], l1) };
        let longer = HeadroomArgs { cable_m: l1 + dl, ..a.clone() };
        let faster = HeadroomArgs { speed_mbps: SPEEDS[i + 1], ..a.clone() };
        let h = Mellanox.headroom(&a, &e).expect("a");
        let hl = Mellanox.headroom(&longer, &e).expect("longer");
        let hf = Mellanox.headroom(&faster, &e).expect("faster");
        prop_assert!(monotone(&h, &hl), "cable: {:?} -> {:?}", h, hl);
        prop_assert!(monotone(&h, &hf), "speed: {:?} -> {:?}", h, hf);
    }

    /// Generic and DSH: non-decreasing in cable length and in speed, for any input.
    #[test]
    fn generic_and_dsh_monotone(
        asic in any_asic(), p in 0u32..=100, shp: bool, mtu in prop::sample::select(vec![1500u32, 9100]),
        i in 0usize..9, l1 in 0.0f64..3000.0, dl in 0.0f64..500.0, dsh: bool,
    ) {
        let e = HeadroomEnv { small_packet_percentage: p, shp_enabled: shp, ..HeadroomEnv::new(asic.params()) };
        let m: &dyn HeadroomModel = if dsh { &Dsh { propagation_mps: 1.98e8, delta_q: None, delta_p: None } } else { &Generic };
        let a = HeadroomArgs { port_mtu: mtu, ..HeadroomArgs::new(SPEEDS[i], l1) };
        let longer = HeadroomArgs { cable_m: l1 + dl, ..a.clone() };
        let faster = HeadroomArgs { speed_mbps: SPEEDS[i + 1], ..a.clone() };
        let h = m.headroom(&a, &e).expect("a");
        prop_assert!(monotone(&h, &m.headroom(&longer, &e).expect("longer")));
        prop_assert!(monotone(&h, &m.headroom(&faster, &e).expect("faster")));
    }

    /// Every Mellanox result is a multiple of 1024 with size ≥ xon (and size = xon + xoff
    /// without SHP on 4-lane ports).
    #[test]
    fn mellanox_results_are_kb_aligned(
        asic in any_asic(), p in 0u32..=100, shp: bool, i in 0usize..10, cable in 0.0f64..5000.0,
        gearbox in 0.0f64..1000.0,
    ) {
        let e = env(asic, p, shp);
        let a = HeadroomArgs { gearbox_delay_ns: gearbox, ..HeadroomArgs::new(SPEEDS[i], cable) };
        let h = Mellanox.headroom(&a, &e).expect("computes");
        prop_assert_eq!((h.xon % 1024, h.xoff % 1024, h.size % 1024), (0, 0, 0));
        prop_assert_eq!(h.size, if shp { h.xon } else { h.xon + h.xoff });
    }
}
