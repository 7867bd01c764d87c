//! STATE_DB: hardware parameters and what orchagent publishes.
//!
//! Tables: `ASIC_TABLE` (from buffermgrd's `-a asic_table.json`), `PERIPHERAL_TABLE` and
//! `PORT_PERIPHERAL_TABLE` (gearbox, `-p peripheral_table.json`), `BUFFER_MAX_PARAM_TABLE`
//! (orchagent: MMU size, per-port maximum headroom, PG and queue counts) and `PORT_TABLE`
//! (`supported_speeds`, for autoneg ports). sonic-buffer.md §2.
//!
//! Also the real `ASIC_TABLE` values of every generation ([`AsicModel`]), as data.
//!
//! Invariants: numeric ASIC parameters are kept as the doubles Lua's `tonumber` reads from
//! the strings (`0.8` stays 0.8, not 819 bytes); the ASIC key is kept because its last
//! character selects generation-specific terms of the headroom formula.

use std::collections::BTreeMap;

use super::{Entry, Fields, LookupError, RawDb, TableError, TableErrors};

/// STATE_DB table names.
pub mod names {
    /// `ASIC_TABLE`.
    pub const ASIC_TABLE: &str = "ASIC_TABLE";
    /// `PERIPHERAL_TABLE`.
    pub const PERIPHERAL_TABLE: &str = "PERIPHERAL_TABLE";
    /// `PORT_PERIPHERAL_TABLE`.
    pub const PORT_PERIPHERAL_TABLE: &str = "PORT_PERIPHERAL_TABLE";
    /// `BUFFER_MAX_PARAM_TABLE`.
    pub const BUFFER_MAX_PARAM_TABLE: &str = "BUFFER_MAX_PARAM_TABLE";
    /// `PORT_TABLE`.
    pub const PORT_TABLE: &str = "PORT_TABLE";
}

/// One `ASIC_TABLE|<NAME>` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct AsicParams {
    /// The key, e.g. `MELLANOX-SPECTRUM-3` (its last character is the generation marker).
    pub name: String,
    /// `cell_size`, bytes.
    pub cell_size: u32,
    /// `pipeline_latency`, kB (1024 B).
    pub pipeline_latency: f64,
    /// `mac_phy_delay`, kB.
    pub mac_phy_delay: f64,
    /// `peer_response_time`, kB (used for speeds without a pause-quanta entry).
    pub peer_response_time: f64,
    /// `port_reserved_shp`, cells (Mellanox; absent on VS and Barefoot).
    pub port_reserved_shp: Option<f64>,
    /// `port_max_shp`, cells (Mellanox; absent on VS and Barefoot).
    pub port_max_shp: Option<f64>,
}

impl AsicParams {
    /// The generation marker: the last character of the key (`'M'` for Spectrum-1, `'2'`…`'6'`).
    pub fn generation_char(&self) -> Option<char> {
        self.name.chars().last()
    }

    /// Whether the Spectrum-4/5 "tile" term applies (key ends in `4` or `5`).
    pub fn has_tile_term(&self) -> bool {
        matches!(self.generation_char(), Some('4' | '5'))
    }

    /// Whether the Spectrum-6 xoff compensation applies (key ends in `6`).
    pub fn is_spectrum6(&self) -> bool {
        self.generation_char() == Some('6')
    }

    /// The entry's fields as SONiC's templates write them.
    pub fn to_fields(&self) -> Fields {
        let n = crate::lua::format_number;
        let mut f = Fields::new();
        f.insert("cell_size".into(), self.cell_size.to_string());
        f.insert("pipeline_latency".into(), n(self.pipeline_latency));
        f.insert("mac_phy_delay".into(), n(self.mac_phy_delay));
        f.insert("peer_response_time".into(), n(self.peer_response_time));
        if let Some(v) = self.port_reserved_shp {
            f.insert("port_reserved_shp".into(), n(v));
        }
        if let Some(v) = self.port_max_shp {
            f.insert("port_max_shp".into(), n(v));
        }
        f
    }

    fn parse(e: &Entry<'_>) -> Result<AsicParams, TableError> {
        let cell = e.req_u64("cell_size")?;
        let cell_size = u32::try_from(cell).ok().filter(|c| *c > 0).ok_or_else(|| {
            e.bad_number(
                "cell_size",
                &cell.to_string(),
                "a positive cell size in bytes",
            )
        })?;
        Ok(AsicParams {
            name: e.key.to_string(),
            cell_size,
            pipeline_latency: e.req_f64("pipeline_latency")?,
            mac_phy_delay: e.req_f64("mac_phy_delay")?,
            peer_response_time: e.req_f64("peer_response_time")?,
            port_reserved_shp: e.opt_f64("port_reserved_shp")?,
            port_max_shp: e.opt_f64("port_max_shp")?,
        })
    }
}

/// The ASICs SONiC ships dynamic-buffer parameters for (sonic-buffer.md §2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AsicModel {
    /// NVIDIA Spectrum (SN2000 series).
    Spectrum1,
    /// Spectrum-2 (SN3000 series).
    Spectrum2,
    /// Spectrum-3 (SN4000 series).
    Spectrum3,
    /// Spectrum-4 (SN5400, SN5600, SN5610N).
    Spectrum4,
    /// Spectrum-5 (SN5640).
    Spectrum5,
    /// Spectrum-6 (SN6600_LD, SN6810_LD).
    Spectrum6,
    /// The virtual switch (docker-sonic-vs).
    Vs,
    /// Barefoot Tofino-2.
    Tofino2,
}

impl AsicModel {
    /// Every model, in generation order.
    pub const ALL: [AsicModel; 8] = [
        AsicModel::Spectrum1,
        AsicModel::Spectrum2,
        AsicModel::Spectrum3,
        AsicModel::Spectrum4,
        AsicModel::Spectrum5,
        AsicModel::Spectrum6,
        AsicModel::Vs,
        AsicModel::Tofino2,
    ];

    /// The `ASIC_TABLE` key.
    pub fn key(self) -> &'static str {
        match self {
            AsicModel::Spectrum1 => "MELLANOX-SPECTRUM",
            AsicModel::Spectrum2 => "MELLANOX-SPECTRUM-2",
            AsicModel::Spectrum3 => "MELLANOX-SPECTRUM-3",
            AsicModel::Spectrum4 => "MELLANOX-SPECTRUM-4",
            AsicModel::Spectrum5 => "MELLANOX-SPECTRUM-5",
            AsicModel::Spectrum6 => "MELLANOX-SPECTRUM-6",
            AsicModel::Vs => "VS-ASIC",
            AsicModel::Tofino2 => "BAREFOOT-TOFINO-2",
        }
    }

    /// The real `ASIC_TABLE` field values (`platform/mellanox/asic_table.j2`,
    /// `platform/barefoot/asic_table.j2`, docker-sonic-vs `asic_table.json`), as strings.
    pub fn fields(self) -> Fields {
        let (cell, pl, shp): (&str, &str, Option<(&str, &str)>) = match self {
            AsicModel::Spectrum1 => ("96", "19", Some(("20", "8192"))),
            AsicModel::Spectrum2 | AsicModel::Spectrum3 => ("144", "19", Some(("20", "8192"))),
            AsicModel::Spectrum4 => ("192", "19", Some(("20", "8192"))),
            AsicModel::Spectrum5 => ("192", "19", Some(("20", "6144"))),
            AsicModel::Spectrum6 => ("256", "42", Some(("20", "6144"))),
            AsicModel::Vs => ("128", "18", None),
            AsicModel::Tofino2 => ("176", "68", None),
        };
        let peer = if self == AsicModel::Tofino2 {
            "9"
        } else {
            "3.8"
        };
        let mut f = Fields::new();
        f.insert("cell_size".into(), cell.into());
        f.insert("pipeline_latency".into(), pl.into());
        f.insert("mac_phy_delay".into(), "0.8".into());
        f.insert("peer_response_time".into(), peer.into());
        if let Some((rsv, max)) = shp {
            f.insert("port_reserved_shp".into(), rsv.into());
            f.insert("port_max_shp".into(), max.into());
        }
        f
    }

    /// The typed parameters (parsed from [`AsicModel::fields`]).
    pub fn params(self) -> AsicParams {
        let f = self.fields();
        let e = Entry::new(names::ASIC_TABLE, self.key(), &f);
        // The literals above are valid; fall back to a neutral record rather than panic.
        AsicParams::parse(&e).unwrap_or(AsicParams {
            name: self.key().into(),
            cell_size: 1,
            pipeline_latency: 0.0,
            mac_phy_delay: 0.0,
            peer_response_time: 0.0,
            port_reserved_shp: None,
            port_max_shp: None,
        })
    }

    /// The flat `asic_table.json` entry: `("ASIC_TABLE:<KEY>", fields)`.
    pub fn flat_entry(self) -> (String, Fields) {
        (
            format!("{}:{}", names::ASIC_TABLE, self.key()),
            self.fields(),
        )
    }

    /// The generation of an NVIDIA platform, from the model number in its name
    /// (`x86_64-mlnx_msn2700-r0` → Spectrum-1, `x86_64-nvidia_sn5640-r0` → Spectrum-5): 2xxx
    /// Spectrum-1, 3xxx Spectrum-2, 4xxx Spectrum-3, 5640 Spectrum-5, other 5xxx Spectrum-4,
    /// 6xxx Spectrum-6. Derived from the platform lists of `asic_table.j2`; `None` when the
    /// name holds no `sn<digits>`.
    pub fn from_mellanox_platform(platform: &str) -> Option<AsicModel> {
        let model = crate::naming::platform_model_number(platform)?;
        Some(match model / 1000 {
            2 => AsicModel::Spectrum1,
            3 => AsicModel::Spectrum2,
            4 => AsicModel::Spectrum3,
            5 if model == 5640 => AsicModel::Spectrum5,
            5 => AsicModel::Spectrum4,
            6 => AsicModel::Spectrum6,
            _ => return None,
        })
    }
}

/// Fixed `egress_lossless_pool` sizes (bytes) of the SKUs listed in sonic-buffer.md §2.3; the
/// pool algorithm uses this as MMU size when STATE_DB has none.
pub const SKU_EGRESS_LOSSLESS_POOL: [(&str, u64); 7] = [
    ("ACS-MSN2700", 13_945_824),
    ("ACS-MSN3800", 34_287_552),
    ("ACS-MSN4700", 60_817_392),
    ("ACS-SN5600", 158_229_504),
    ("Mellanox-SN5600-C256S1", 158_229_504),
    ("Mellanox-SN5640", 136_209_408),
    ("ACS-SN6600_LD", 226_492_416),
];

/// `BUFFER_MAX_PARAM_TABLE|<port>`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PortMaxParams {
    /// `max_headroom_size`, bytes (absent when SAI does not report it: no limit).
    pub max_headroom_size: Option<u64>,
    /// `max_priority_groups`.
    pub max_priority_groups: Option<u64>,
    /// `max_queues`.
    pub max_queues: Option<u64>,
}

/// A typed STATE_DB snapshot of the tables the buffer manager reads.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct StateDb {
    /// `ASIC_TABLE`: key → parameters (exactly one expected).
    pub asic_table: BTreeMap<String, AsicParams>,
    /// `PERIPHERAL_TABLE`: gearbox model → `gearbox_delay` (ns).
    pub peripheral_gearbox_delay: BTreeMap<String, Option<f64>>,
    /// `PORT_PERIPHERAL_TABLE`: `global` or port → `gearbox_model`.
    pub port_peripheral_model: BTreeMap<String, Option<String>>,
    /// `BUFFER_MAX_PARAM_TABLE|global.mmu_size`, bytes.
    pub mmu_size: Option<u64>,
    /// `BUFFER_MAX_PARAM_TABLE|<port>`.
    pub port_max: BTreeMap<String, PortMaxParams>,
    /// `PORT_TABLE|<port>.supported_speeds` (Mb/s).
    pub supported_speeds: BTreeMap<String, Vec<u64>>,
}

impl StateDb {
    /// Reads the buffer-related tables of a STATE_DB dump (nested format). Returns every error
    /// found. `gearbox_delay` values that are not numbers count as absent, as the plugin's
    /// `tonumber` makes them 0.
    pub fn from_raw(raw: &RawDb) -> Result<StateDb, TableErrors> {
        let mut errs = Vec::new();
        let mut db = StateDb::default();
        let empty = BTreeMap::new();
        let table = |name: &str| raw.get(name).unwrap_or(&empty);
        for (k, f) in table(names::ASIC_TABLE) {
            match AsicParams::parse(&Entry::new(names::ASIC_TABLE, k, f)) {
                Ok(a) => {
                    db.asic_table.insert(k.clone(), a);
                }
                Err(e) => errs.push(e),
            }
        }
        for (k, f) in table(names::PERIPHERAL_TABLE) {
            let d = f.get("gearbox_delay").and_then(|v| crate::lua::tonumber(v));
            db.peripheral_gearbox_delay.insert(k.clone(), d);
        }
        for (k, f) in table(names::PORT_PERIPHERAL_TABLE) {
            db.port_peripheral_model
                .insert(k.clone(), f.get("gearbox_model").cloned());
        }
        for (k, f) in table(names::BUFFER_MAX_PARAM_TABLE) {
            let e = Entry::new(names::BUFFER_MAX_PARAM_TABLE, k, f);
            if k == "global" {
                match e.opt_u64("mmu_size") {
                    Ok(m) => db.mmu_size = m,
                    Err(err) => errs.push(err),
                }
                continue;
            }
            let p = (|| {
                Ok(PortMaxParams {
                    max_headroom_size: e.opt_u64("max_headroom_size")?,
                    max_priority_groups: e.opt_u64("max_priority_groups")?,
                    max_queues: e.opt_u64("max_queues")?,
                })
            })();
            match p {
                Ok(p) => {
                    db.port_max.insert(k.clone(), p);
                }
                Err(err) => errs.push(err),
            }
        }
        for (k, f) in table(names::PORT_TABLE) {
            let Some(v) = f.get("supported_speeds") else {
                continue;
            };
            let e = Entry::new(names::PORT_TABLE, k, f);
            let speeds: Result<Vec<u64>, TableError> = v
                .split(',')
                .filter(|s| !s.trim().is_empty())
                .map(|s| {
                    super::parse_u64(s).ok_or_else(|| {
                        e.bad_number("supported_speeds", v, "a comma list of speeds (Mb/s)")
                    })
                })
                .collect();
            match speeds {
                Ok(s) => {
                    db.supported_speeds.insert(k.clone(), s);
                }
                Err(err) => errs.push(err),
            }
        }
        if errs.is_empty() {
            Ok(db)
        } else {
            Err(TableErrors(errs))
        }
    }

    /// A snapshot with one ASIC entry and nothing else.
    pub fn with_asic(asic: AsicParams) -> StateDb {
        let mut db = StateDb::default();
        db.asic_table.insert(asic.name.clone(), asic);
        db
    }

    /// The single ASIC entry (error if there is none or more than one).
    pub fn asic(&self) -> Result<&AsicParams, LookupError> {
        match self.asic_table.len() {
            0 => Err(LookupError::NoAsic),
            1 => self.asic_table.values().next().ok_or(LookupError::NoAsic),
            n => Err(LookupError::ManyAsics(n)),
        }
    }

    /// The global gearbox model: `PORT_PERIPHERAL_TABLE|global.gearbox_model`.
    pub fn gearbox_model(&self) -> Option<&str> {
        self.port_peripheral_model.get("global")?.as_deref()
    }

    /// The gearbox delay (ns) buffermgrd passes to the headroom plugin: the `gearbox_delay` of
    /// the global gearbox model, 0 if there is none (sonic-buffer.md §2.2).
    pub fn gearbox_delay_ns(&self) -> f64 {
        self.gearbox_model()
            .and_then(|m| self.peripheral_gearbox_delay.get(m).copied().flatten())
            .unwrap_or(0.0)
    }

    /// `max_headroom_size` of `port`, if published.
    pub fn max_headroom_size(&self, port: &str) -> Option<u64> {
        self.port_max.get(port)?.max_headroom_size
    }

    /// Renders the typed tables back into SONiC's nested format.
    pub fn to_raw(&self) -> RawDb {
        let mut db = RawDb::new();
        for (k, a) in &self.asic_table {
            db.entry(names::ASIC_TABLE.into())
                .or_default()
                .insert(k.clone(), a.to_fields());
        }
        for (k, d) in &self.peripheral_gearbox_delay {
            let mut f = Fields::new();
            if let Some(d) = d {
                f.insert("gearbox_delay".into(), crate::lua::format_number(*d));
            }
            db.entry(names::PERIPHERAL_TABLE.into())
                .or_default()
                .insert(k.clone(), f);
        }
        for (k, m) in &self.port_peripheral_model {
            let mut f = Fields::new();
            if let Some(m) = m {
                f.insert("gearbox_model".into(), m.clone());
            }
            db.entry(names::PORT_PERIPHERAL_TABLE.into())
                .or_default()
                .insert(k.clone(), f);
        }
        if let Some(m) = self.mmu_size {
            let mut f = Fields::new();
            f.insert("mmu_size".into(), m.to_string());
            db.entry(names::BUFFER_MAX_PARAM_TABLE.into())
                .or_default()
                .insert("global".into(), f);
        }
        for (k, p) in &self.port_max {
            let mut f = Fields::new();
            for (n, v) in [
                ("max_headroom_size", p.max_headroom_size),
                ("max_priority_groups", p.max_priority_groups),
                ("max_queues", p.max_queues),
            ] {
                if let Some(v) = v {
                    f.insert(n.into(), v.to_string());
                }
            }
            db.entry(names::BUFFER_MAX_PARAM_TABLE.into())
                .or_default()
                .insert(k.clone(), f);
        }
        for (k, s) in &self.supported_speeds {
            let mut f = Fields::new();
            let l: Vec<String> = s.iter().map(u64::to_string).collect();
            f.insert("supported_speeds".into(), l.join(","));
            db.entry(names::PORT_TABLE.into())
                .or_default()
                .insert(k.clone(), f);
        }
        db
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// sonic-buffer.md §2.1, one row per generation:
    /// (model, key, cell, pipeline kB, mac/phy kB, peer kB, reserved shp, max shp).
    #[test]
    fn asic_table_rows() {
        type Row = (
            AsicModel,
            &'static str,
            u32,
            f64,
            f64,
            f64,
            Option<f64>,
            Option<f64>,
        );
        let rows: [Row; 8] = [
            (
                AsicModel::Spectrum1,
                "MELLANOX-SPECTRUM",
                96,
                19.0,
                0.8,
                3.8,
                Some(20.0),
                Some(8192.0),
            ),
            (
                AsicModel::Spectrum2,
                "MELLANOX-SPECTRUM-2",
                144,
                19.0,
                0.8,
                3.8,
                Some(20.0),
                Some(8192.0),
            ),
            (
                AsicModel::Spectrum3,
                "MELLANOX-SPECTRUM-3",
                144,
                19.0,
                0.8,
                3.8,
                Some(20.0),
                Some(8192.0),
            ),
            (
                AsicModel::Spectrum4,
                "MELLANOX-SPECTRUM-4",
                192,
                19.0,
                0.8,
                3.8,
                Some(20.0),
                Some(8192.0),
            ),
            (
                AsicModel::Spectrum5,
                "MELLANOX-SPECTRUM-5",
                192,
                19.0,
                0.8,
                3.8,
                Some(20.0),
                Some(6144.0),
            ),
            (
                AsicModel::Spectrum6,
                "MELLANOX-SPECTRUM-6",
                256,
                42.0,
                0.8,
                3.8,
                Some(20.0),
                Some(6144.0),
            ),
            (AsicModel::Vs, "VS-ASIC", 128, 18.0, 0.8, 3.8, None, None),
            (
                AsicModel::Tofino2,
                "BAREFOOT-TOFINO-2",
                176,
                68.0,
                0.8,
                9.0,
                None,
                None,
            ),
        ];
        for (m, key, cell, pl, mpd, peer, rsv, max) in rows {
            let p = m.params();
            assert_eq!(m.key(), key);
            assert_eq!(
                (
                    p.name.as_str(),
                    p.cell_size,
                    p.pipeline_latency,
                    p.mac_phy_delay,
                    p.peer_response_time,
                    p.port_reserved_shp,
                    p.port_max_shp
                ),
                (key, cell, pl, mpd, peer, rsv, max),
                "{m:?}"
            );
        }
        assert_eq!(AsicModel::Spectrum1.params().generation_char(), Some('M'));
        assert!(AsicModel::Spectrum4.params().has_tile_term());
        assert!(AsicModel::Spectrum5.params().has_tile_term());
        assert!(!AsicModel::Spectrum3.params().has_tile_term());
        assert!(AsicModel::Spectrum6.params().is_spectrum6());
    }

    #[test]
    fn asic_flat_file_round_trips() {
        let mut flat = BTreeMap::new();
        let (k, f) = AsicModel::Spectrum3.flat_entry();
        flat.insert(k, f);
        let raw = crate::tables::raw::from_flat(&flat, ':').expect("flat");
        let db = StateDb::from_raw(&raw).expect("state");
        assert_eq!(db.asic(), Ok(&AsicModel::Spectrum3.params()));
    }

    #[test]
    fn platforms_map_to_generations() {
        for (p, m) in [
            ("x86_64-mlnx_msn2700-r0", AsicModel::Spectrum1),
            ("x86_64-nvidia_sn2201-r0", AsicModel::Spectrum1),
            ("x86_64-mlnx_msn3800-r0", AsicModel::Spectrum2),
            ("x86_64-mlnx_msn4700-r0", AsicModel::Spectrum3),
            ("x86_64-nvidia_sn4280-r0", AsicModel::Spectrum3),
            ("x86_64-nvidia_sn5600-r0", AsicModel::Spectrum4),
            ("x86_64-nvidia_sn5640-r0", AsicModel::Spectrum5),
            ("x86_64-nvidia_sn6600_ld-r0", AsicModel::Spectrum6),
        ] {
            assert_eq!(AsicModel::from_mellanox_platform(p), Some(m), "{p}");
        }
        assert_eq!(
            AsicModel::from_mellanox_platform("x86_64-kvm_x86_64-r0"),
            None
        );
    }

    #[test]
    fn gearbox_delay_is_global() {
        let mut db = StateDb::default();
        assert_eq!(db.gearbox_delay_ns(), 0.0);
        db.peripheral_gearbox_delay
            .insert("MELLANOX-GEARBOX-3800".into(), Some(400.0));
        assert_eq!(
            db.gearbox_delay_ns(),
            0.0,
            "no PORT_PERIPHERAL_TABLE: no delay"
        );
        db.port_peripheral_model
            .insert("global".into(), Some("MELLANOX-GEARBOX-3800".into()));
        assert_eq!(db.gearbox_delay_ns(), 400.0);
    }

    #[test]
    fn asic_lookup_needs_exactly_one() {
        let mut db = StateDb::default();
        assert_eq!(db.asic(), Err(LookupError::NoAsic));
        for m in [AsicModel::Spectrum1, AsicModel::Spectrum2] {
            db.asic_table.insert(m.key().into(), m.params());
        }
        assert_eq!(db.asic(), Err(LookupError::ManyAsics(2)));
    }
}
