//! buffermgrd's dynamic mode (`BufferMgrDynamic`) as a sans-IO state machine
//! (sonic-buffer.md §7, §9, §11).
//!
//! The manager consumes table changes ([`Input`]: CONFIG_DB / STATE_DB keyspace events,
//! orchagent's APPL_STATE_DB responses, `PortInitDone`) and produces database writes and log
//! lines ([`Output`]), in the style of `quinn-proto`: [`BufferManager::handle`] feeds one
//! input, [`BufferManager::poll_output`] drains what it produced,
//! [`BufferManager::poll_timeout`] / [`BufferManager::handle_timeout`] drive SONiC's timers
//! (the 1 s retry of pending items, the 10 s periodic timer, the 1 s polls of the
//! shared-headroom-pool ordering waits). There is no clock and no I/O: time is a
//! [`Duration`] since an epoch chosen by the caller, and the Redis wiring is the daemon's job
//! ([`crate::daemon`], over [`crate::swss`]). [`harness::Harness`] runs the manager against
//! in-memory databases.
//!
//! What it reproduces (§7): start-up outputs (ASIC/peripheral tables to STATE_DB, warm-restart
//! state), gating until the buffer pools are ready and until `PortInitDone`, the port state
//! machine (`ADMIN_DOWN` / `INITIALIZING` / `READY`) with the effective speed of autoneg ports,
//! refreshing a port's PGs with dynamic profiles named as §7.5, releasing unreferenced dynamic
//! profiles at once, the `BUFFER_PG` / `BUFFER_PROFILE` / `BUFFER_POOL` / `BUFFER_QUEUE` /
//! profile-list / `DEFAULT_LOSSLESS_BUFFER_PARAMETER` / `BUFFER_MAX_PARAM_TABLE` handlers,
//! zero profiles on admin-down ports, the shared-headroom-pool toggle table (with the
//! APPL_STATE_DB ordering waits), the maximum-headroom check (a failure stops the refresh and
//! leaves CONFIG_DB and APPL_DB inconsistent by design, §11.7) and warm reboot.
//!
//! Invariants:
//! - **Mirrors follow inputs, handlers follow the queue.** The CONFIG_DB / STATE_DB views the
//!   plugins read (pool sizes, check, headroom environment) are updated as soon as an input
//!   arrives, as the real plugins read Redis directly; buffermgrd's own records change only
//!   when the item is processed, which may be later (retries).
//! - **Nothing is dropped silently.** An item that cannot be processed yet (unknown profile or
//!   pool, referenced profile being removed, overlapping id range, port not in `PORT` yet,
//!   headroom that cannot be computed yet) stays queued and is retried 1 s after the last
//!   activity and whenever its table gets a new event, as SONiC's `Orch` consumers do; a
//!   malformed or rejected item produces an error [`Output::Log`] naming table, key and
//!   reason, and the manager carries on.
//! - **APPL_DB writes are ProducerStateTable writes**: [`Output::ApplSet`] merges its fields
//!   into the hash (a field is never removed by a set), [`Output::ApplDel`] deletes it.
//!   [`BufferManager::appl_db`] is the result of applying every output in order (orchagent is
//!   assumed to consume at once, so the pool algorithm never takes its fallback path here).
//! - **Deterministic**: all maps are `BTreeMap`s, items are processed in SONiC's order (tables
//!   by name, keys sorted); the same inputs at the same times give the same outputs.
//!
//! Deliberate differences from buffermgrd. Most make the result independent of the order in
//! which CONFIG_DB entries arrive (a fresh start on a CONFIG_DB converges to the APPL_DB of
//! any history of changes ending in it, where SONiC's own rules allow it); the others avoid
//! leaks and crashes:
//! - objects of a port without a `PORT` entry yet are recorded, not written (buffermgrd
//!   treats such a port as admin down and may then never reclaim it); `PORT` DEL is retried
//!   until the port's PGs, queues and profile lists are gone, then its zero items are removed;
//! - a `PORT` field removed from the entry reverts to its default (buffermgrd keeps the old
//!   value); a `BUFFER_PROFILE` SET replaces the profile's fields, and PGs configured with it
//!   follow a change of its kind (lossy / lossless / `headroom_type`);
//! - PG and queue id ranges of a port must be disjoint: an overlapping SET is logged as an
//!   error and retried until the conflicting range is removed (buffermgrd does not check);
//! - a PG whose running profile changes from a dynamic one to a lossy one releases the dynamic
//!   profile, and a refresh refused by the headroom check still releases the profiles it had
//!   already replaced (buffermgrd leaks both); a profile removal is also retried while queues
//!   or profile lists reference it, and a PG of an admin-down port keeps the reference to its
//!   configured profile;
//! - a headroom computation that cannot run (no `LOSSLESS_TRAFFIC_PATTERN` yet, invalid ASIC
//!   parameters) is retried instead of writing a profile with empty `xon`/`xoff`/`size`;
//!   a configured profile without a threshold is written without a threshold field (not an
//!   empty one); a `headroom_type: dynamic` profile is never written to APPL_DB (§7.7);
//! - reclaiming a profile list without zero profiles removes it (buffermgrd writes an empty
//!   `profile_list`); an admin-down port is reclaimed as soon as its `BUFFER_MAX_PARAM_TABLE`
//!   maxima arrive (buffermgrd only looks again during initialisation); on admin up, the
//!   vendor's zero item (`<port>:0` on Mellanox) is removed unless the port configures that
//!   range;
//! - each PG of a refresh is checked as the PG being configured (`new_pg`, §7.4), so a cable
//!   or speed change that exceeds the port's maximum headroom is refused (with buffermgrd's
//!   empty `new_pg` the check reads the old profiles and passes); a check that cannot be
//!   evaluated passes with a warning (as buffermgrd treats a plugin error), and PG ranges are
//!   counted correctly (§11.4);
//! - the ordering waits of §7.9 happen only after `PortInitDone` (orchagent answers), and end
//!   as soon as the APPL_STATE_DB response arrives (buffermgrd notices it at its next 1 s
//!   poll); a static pool is copied to APPL_DB before, not after, the toggle it causes;
//! - `DEVICE_METADATA` is followed when it changes (buffermgrd reads the platform once at
//!   start); a malformed `CABLE_LENGTH` field is logged and skipped, the others apply.

mod admin_down;
mod flows;
pub mod harness;
mod pools;
mod queue;
mod records;
mod tables;
mod writes;
mod zero;

use queue::{Block, Pending, Resume, Status, WaitFor};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

use crate::model::Model;
use crate::tables::appl::ApplDb;
use crate::tables::config::ConfigDb;
use crate::tables::state::{AsicModel, StateDb};
use crate::tables::{Fields, IdRange, LookupError, RawDb, TableError, TableErrors};

pub use records::PortState;
pub use zero::{ZeroProfiles, ZeroProfilesError};

use records::{Dir, PoolInfo, PortInfo, ProfileInfo};

/// SONiC's select timeout: pending items are retried after this much quiet time.
pub const RETRY_INTERVAL: Duration = Duration::from_secs(1);
/// buffermgrd's periodic timer (`BUFFERMGR_TIMER_PERIOD`).
pub const TIMER_PERIOD: Duration = Duration::from_secs(10);
/// Interval of the polls of an ordering wait (§7.9).
pub const WAIT_POLL_INTERVAL: Duration = Duration::from_secs(1);
/// Number of polls before an ordering wait fails (§7.9).
pub const WAIT_POLLS: u32 = 30;
/// Timer ticks the extra zero profiles are deferred by on cold/fast boot (3 × 10 s).
pub const ADDITIONAL_ZERO_PROFILE_TICKS: u32 = 3;

/// STATE_DB table of the warm-restart state (`WARM_RESTART_TABLE|buffermgrd.state`).
pub const WARM_RESTART_TABLE: &str = "WARM_RESTART_TABLE";

/// Severity of a [`Output::Log`] line (the syslog levels buffermgrd uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// Something failed: a rejected entry, an exceeded headroom limit, a failed wait.
    Error,
    /// Something odd that does not stop processing (e.g. a check that cannot be evaluated).
    Warning,
    /// Significant state changes (pools ready, profiles created/released, port states).
    Notice,
    /// Details (deferred items).
    Info,
}

/// A table change fed to the manager. Keys are object keys without the table name
/// (`Ethernet0|3-4` for CONFIG_DB `BUFFER_PG`, `Ethernet0` for STATE_DB `PORT_TABLE`).
/// A SET carries the whole hash, as SONiC's `SubscriberStateTable` re-reads it.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    /// CONFIG_DB hash set (or changed).
    ConfigSet {
        /// Table, e.g. `BUFFER_PG`.
        table: String,
        /// Object key, e.g. `Ethernet0|3-4`.
        key: String,
        /// All fields of the hash.
        fields: Fields,
    },
    /// CONFIG_DB hash deleted.
    ConfigDel {
        /// Table.
        table: String,
        /// Object key.
        key: String,
    },
    /// STATE_DB hash set (`BUFFER_MAX_PARAM_TABLE`, `PORT_TABLE`).
    StateSet {
        /// Table.
        table: String,
        /// Object key.
        key: String,
        /// All fields of the hash.
        fields: Fields,
    },
    /// STATE_DB hash deleted.
    StateDel {
        /// Table.
        table: String,
        /// Object key.
        key: String,
    },
    /// APPL_STATE_DB hash set by orchagent after applying an object (`BUFFER_POOL_TABLE`,
    /// `BUFFER_PROFILE_TABLE`); only the ordering waits of §7.9 read it.
    ApplStateSet {
        /// Table.
        table: String,
        /// Object key.
        key: String,
        /// All fields of the hash.
        fields: Fields,
    },
    /// APPL_STATE_DB hash deleted.
    ApplStateDel {
        /// Table.
        table: String,
        /// Object key.
        key: String,
    },
    /// APPL_DB `PORT_TABLE:PortInitDone` appeared (orchagent finished port initialisation).
    /// buffermgrd notices it at its next periodic timer tick.
    PortInitDone,
}

impl Input {
    /// A CONFIG_DB set from `(field, value)` pairs.
    pub fn config_set(table: &str, key: &str, fields: &[(&str, &str)]) -> Input {
        Input::ConfigSet {
            table: table.into(),
            key: key.into(),
            fields: to_fields(fields),
        }
    }

    /// A CONFIG_DB delete.
    pub fn config_del(table: &str, key: &str) -> Input {
        Input::ConfigDel {
            table: table.into(),
            key: key.into(),
        }
    }

    /// A STATE_DB set from `(field, value)` pairs.
    pub fn state_set(table: &str, key: &str, fields: &[(&str, &str)]) -> Input {
        Input::StateSet {
            table: table.into(),
            key: key.into(),
            fields: to_fields(fields),
        }
    }
}

/// `(field, value)` pairs as [`Fields`].
pub fn to_fields(fields: &[(&str, &str)]) -> Fields {
    fields
        .iter()
        .map(|(f, v)| (f.to_string(), v.to_string()))
        .collect()
}

/// Something the manager wants done.
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    /// APPL_DB ProducerStateTable set: merge `fields` into `table:key`.
    ApplSet {
        /// Table, e.g. `BUFFER_PG_TABLE`.
        table: String,
        /// Object key with `:` separators, e.g. `Ethernet0:3-4`.
        key: String,
        /// Fields to set.
        fields: Fields,
    },
    /// APPL_DB ProducerStateTable delete.
    ApplDel {
        /// Table.
        table: String,
        /// Object key.
        key: String,
    },
    /// STATE_DB hash write (replaces the hash): `ASIC_TABLE`, `PERIPHERAL_TABLE`, the
    /// `BUFFER_POOL_TABLE` / `BUFFER_PROFILE_TABLE` mirrors, `WARM_RESTART_TABLE`.
    StateSet {
        /// Table.
        table: String,
        /// Object key.
        key: String,
        /// Fields.
        fields: Fields,
    },
    /// STATE_DB delete.
    StateDel {
        /// Table.
        table: String,
        /// Object key.
        key: String,
    },
    /// A log line.
    Log {
        /// Severity.
        level: LogLevel,
        /// The message (names table, key and reason for rejected entries).
        message: String,
    },
}

/// Why an entry was rejected (the message of an error [`Output::Log`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EntryError {
    /// The entry does not parse (bad number, unknown enum word, malformed key or range).
    #[error("malformed entry: {0}")]
    Malformed(#[from] TableError),
    /// A field buffermgrd does not accept in this table (anything but `profile` in
    /// `BUFFER_PG`).
    #[error("{table}|{key}: unexpected field `{field}` (only `profile` is allowed)")]
    UnexpectedField {
        /// Table.
        table: String,
        /// Object key.
        key: String,
        /// The field.
        field: String,
    },
    /// A profile used in the wrong direction (egress profile on a PG, ingress profile on a
    /// queue or in the egress list).
    #[error("{table}|{key}: profile {profile:?} is an {actual} profile, {expected} expected")]
    WrongDirection {
        /// Table.
        table: String,
        /// Object key.
        key: String,
        /// The profile.
        profile: String,
        /// Its direction.
        actual: &'static str,
        /// The direction the table needs.
        expected: &'static str,
    },
    /// A profile's threshold field does not match its pool's mode.
    #[error("BUFFER_PROFILE|{profile}: `{field}` given but pool {pool:?} is in {mode} mode")]
    ThresholdMode {
        /// The profile.
        profile: String,
        /// The pool.
        pool: String,
        /// The threshold field given.
        field: &'static str,
        /// The pool's mode.
        mode: &'static str,
    },
    /// A lossless profile (with `xoff` or `headroom_type: dynamic`) on an egress pool.
    #[error("BUFFER_PROFILE|{profile}: lossless profile on egress pool {pool:?}")]
    LosslessOnEgress {
        /// The profile.
        profile: String,
        /// The pool.
        pool: String,
    },
    /// Removing PGs/queues is not supported on the platform (zero-profile file).
    #[error("{table}|{key}: removing buffer items is not supported on this platform")]
    RemovalUnsupported {
        /// Table.
        table: String,
        /// Object key.
        key: String,
    },
    /// A dynamically generated profile cannot be removed while PGs use it.
    #[error("BUFFER_PROFILE|{profile}: a dynamically generated profile in use cannot be removed")]
    RemoveGenerated {
        /// The profile.
        profile: String,
    },
    /// A `BUFFER_MAX_PARAM_TABLE` value that is not a positive number.
    #[error("BUFFER_MAX_PARAM_TABLE|{key}: `{field}` = {value:?} is not a positive number")]
    BadMaxParam {
        /// Object key (`global` or a port).
        key: String,
        /// The field.
        field: String,
        /// The value.
        value: String,
    },
    /// The port's accumulated headroom would exceed its limit (§6).
    #[error("port {port}: profile {profile:?} on PG {pg} exceeds the port's maximum headroom ({detail}); not applied, CONFIG_DB and APPL_DB now disagree: revert the configuration")]
    HeadroomExceeded {
        /// The port.
        port: String,
        /// The profile.
        profile: String,
        /// The PG (`*` when a profile update is checked against every PG using it).
        pg: String,
        /// Accumulated vs maximum.
        detail: String,
    },
}

/// Why a manager could not be created.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BufMgrError {
    /// The ASIC/peripheral tables do not parse.
    #[error("ASIC/peripheral tables: {0}")]
    Tables(#[from] TableErrors),
    /// Not exactly one `ASIC_TABLE` entry.
    #[error(transparent)]
    Asic(#[from] LookupError),
}

/// A headroom computation outside the manager, used instead of [`Options::model`] when set:
/// a vendor's `buffer_headroom_<vendor>.lua` run by the daemon in Redis (sonic-buffer.md
/// §1.5, §3). It is called synchronously while an input or timer is handled.
pub trait HeadroomPlugin: std::fmt::Debug + Send + Sync {
    /// Computes profile `profile` from the plugin's `ARGV`: effective speed, cable length as
    /// configured, port MTU, gearbox delay, lane count (strings, as buffermgrd passes them).
    /// `Err` is why it cannot be computed now; the item is retried.
    fn headroom(&self, profile: &str, argv: [&str; 5]) -> Result<crate::model::Headroom, String>;
}

/// How the manager is started (buffermgrd's command line and environment).
#[derive(Clone, Debug)]
pub struct Options {
    /// The headroom model (the `buffer_headroom_<vendor>.lua` plugin).
    pub model: Model,
    /// Warm start (`WarmStart::isWarmStart()`).
    pub warm_reboot: bool,
    /// STATE_DB tables from the `-a asic_table.json` and `-p peripheral_table.json` files
    /// (`ASIC_TABLE`, `PERIPHERAL_TABLE`, `PORT_PERIPHERAL_TABLE`), written to STATE_DB at
    /// start. Exactly one `ASIC_TABLE` entry.
    pub hardware_tables: RawDb,
    /// The `-z zero_profiles.json` file, if any.
    pub zero_profiles: Option<ZeroProfiles>,
    /// Mellanox profile naming (`_8lane`; `ASIC_VENDOR=mellanox`).
    pub mellanox_naming: bool,
    /// Perform the ordering waits of §7.9 (they need orchagent's APPL_STATE_DB responses as
    /// [`Input::ApplStateSet`]). Without them a toggle proceeds at once.
    pub wait_for_orchagent: bool,
    /// APPL_DB content that survived a warm reboot (the starting point of the mirror).
    pub preserved_appl_db: RawDb,
    /// The time the manager starts (the phase of the periodic timer).
    pub start: Duration,
    /// An external headroom computation replacing `model` for dynamic profiles (the model
    /// still names the vendor for profile naming and the pool and check computations).
    pub headroom_plugin: Option<std::sync::Arc<dyn HeadroomPlugin>>,
}

impl Options {
    /// Options for `model` on `asic`: cold start, no zero profiles, Mellanox naming when the
    /// ASIC is a Mellanox one (whatever the headroom model, as `plan` names profiles),
    /// ordering waits on, starting at time 0.
    pub fn new(model: Model, asic: AsicModel) -> Options {
        let mut hw = RawDb::new();
        hw.entry(crate::tables::state::names::ASIC_TABLE.to_string())
            .or_default()
            .insert(asic.key().to_string(), asic.fields());
        let mellanox_naming = crate::naming::is_mellanox_asic(asic.key());
        Options {
            model,
            warm_reboot: false,
            hardware_tables: hw,
            zero_profiles: None,
            mellanox_naming,
            wait_for_orchagent: true,
            preserved_appl_db: RawDb::new(),
            start: Duration::ZERO,
            headroom_plugin: None,
        }
    }
}

/// The zero-profile state (`m_zeroPoolNameSet`, `m_zeroProfiles`, control fields).
#[derive(Clone, Debug, Default)]
struct ZeroState {
    loaded: bool,
    pools: BTreeSet<String>,
    /// (profile, pool) in file order.
    profiles: Vec<(String, String)>,
    ids_to_zero: [Option<IdRange>; 2],
    zero_profile_name: [Option<String>; 2],
    support_removing: bool,
}

/// buffermgrd in dynamic mode. See the module documentation.
#[derive(Clone, Debug)]
pub struct BufferManager {
    model: Model,
    plugin: Option<std::sync::Arc<dyn HeadroomPlugin>>,
    warm: bool,
    mellanox_naming: bool,
    wait_for_orchagent: bool,
    zero_file: Option<ZeroProfiles>,

    // What the plugins read.
    cfg: ConfigDb,
    state: StateDb,
    appl: RawDb,
    /// Shared so that reading it is not a copy of the whole APPL_DB.
    appl_cache: Option<std::sync::Arc<ApplDb>>,
    appl_state: RawDb,
    state_out: RawDb,
    port_init_done_seen: bool,

    // buffermgrd's records.
    pools: BTreeMap<String, PoolInfo>,
    profiles: BTreeMap<String, ProfileInfo>,
    ports: BTreeMap<String, PortInfo>,
    pgs: BTreeMap<String, records::PortPgs>,
    queues: BTreeMap<String, BTreeMap<IdRange, String>>,
    lists: [BTreeMap<String, String>; 2],
    default_threshold: Option<i8>,
    ratio: Option<String>,
    configured_shp: Option<String>,
    mmu_size: Option<u64>,
    model_number: Option<u32>,
    port_init_done: bool,
    pool_ready: bool,
    objects_pending: bool,
    completely_initialized: bool,
    wait_additional_zero: u32,
    admin_down_ports: BTreeSet<String>,
    pending_zero_ports: BTreeSet<String>,
    pending_sbnc_ports: [BTreeSet<String>; 2],
    zero: ZeroState,
    refresh_pending: BTreeSet<String>,

    // Scheduling.
    todo: BTreeMap<String, BTreeMap<String, Pending>>,
    out: VecDeque<Output>,
    now: Duration,
    retry_at: Option<Duration>,
    next_tick: Duration,
    block: Option<Block>,
    tick_deferred: bool,
}

/// CONFIG_DB tables the manager takes as input: buffermgrd's consumers (the first
/// [`CONFIG_HANDLED`] ones, handled through the retry queue), then the tables its plugins
/// read directly.
pub const CONFIG_TABLES: [&str; 11] = [
    "PORT",
    "CABLE_LENGTH",
    "BUFFER_POOL",
    "BUFFER_PROFILE",
    "BUFFER_PG",
    "BUFFER_QUEUE",
    "BUFFER_PORT_INGRESS_PROFILE_LIST",
    "BUFFER_PORT_EGRESS_PROFILE_LIST",
    "DEFAULT_LOSSLESS_BUFFER_PARAMETER",
    "LOSSLESS_TRAFFIC_PATTERN",
    "DEVICE_METADATA",
];
/// CONFIG_DB tables buffermgrd subscribes to (handled through the retry queue).
const CONFIG_HANDLED: &[&str] = CONFIG_TABLES.split_at(9).0;
/// STATE_DB tables buffermgrd subscribes to (published by orchagent).
pub const STATE_TABLES: [&str; 2] = ["BUFFER_MAX_PARAM_TABLE", "PORT_TABLE"];

impl BufferManager {
    /// Starts a manager. It writes the hardware tables and the warm-restart state to STATE_DB
    /// (drain them with [`BufferManager::poll_output`]).
    pub fn new(options: Options) -> Result<BufferManager, BufMgrError> {
        let state = StateDb::from_raw(&options.hardware_tables)?;
        state.asic()?;
        let mut m = BufferManager {
            model: options.model,
            plugin: options.headroom_plugin,
            warm: options.warm_reboot,
            mellanox_naming: options.mellanox_naming,
            wait_for_orchagent: options.wait_for_orchagent,
            zero_file: options.zero_profiles,
            cfg: ConfigDb::default(),
            state,
            appl: options.preserved_appl_db,
            appl_cache: None,
            appl_state: RawDb::new(),
            state_out: RawDb::new(),
            port_init_done_seen: false,
            pools: BTreeMap::new(),
            profiles: BTreeMap::new(),
            ports: BTreeMap::new(),
            pgs: BTreeMap::new(),
            queues: BTreeMap::new(),
            lists: [BTreeMap::new(), BTreeMap::new()],
            default_threshold: None,
            ratio: None,
            configured_shp: None,
            mmu_size: None,
            model_number: None,
            port_init_done: false,
            pool_ready: false,
            objects_pending: true,
            completely_initialized: false,
            wait_additional_zero: if options.warm_reboot {
                0
            } else {
                ADDITIONAL_ZERO_PROFILE_TICKS
            },
            admin_down_ports: BTreeSet::new(),
            pending_zero_ports: BTreeSet::new(),
            pending_sbnc_ports: [BTreeSet::new(), BTreeSet::new()],
            zero: ZeroState {
                support_removing: true,
                ..ZeroState::default()
            },
            refresh_pending: BTreeSet::new(),
            todo: BTreeMap::new(),
            out: VecDeque::new(),
            now: options.start,
            retry_at: None,
            next_tick: options.start + TIMER_PERIOD,
            block: None,
            tick_deferred: false,
        };
        if let Some(z) = &m.zero_file {
            m.zero.support_removing = z.support_removing_buffer_items;
        }
        for (table, entries) in &options.hardware_tables {
            for (key, fields) in entries {
                m.state_write(table, key, fields.clone());
            }
        }
        m.set_warm_state(if m.warm { "initialized" } else { "disabled" });
        Ok(m)
    }

    /// Feeds one input at time `now` (monotonic: never before an earlier `now`).
    pub fn handle(&mut self, now: Duration, input: Input) {
        self.now = self.now.max(now);
        match input {
            Input::ConfigSet { table, key, fields } => {
                if self.mirror_config(&table, &key, Some(&fields)) {
                    self.enqueue(&table, &key, Some(fields));
                }
            }
            Input::ConfigDel { table, key } => {
                if self.mirror_config(&table, &key, None) {
                    self.enqueue(&table, &key, None);
                }
            }
            Input::StateSet { table, key, fields } => {
                if self.mirror_state(&table, &key, Some(&fields)) {
                    self.enqueue(&table, &key, Some(fields));
                }
            }
            Input::StateDel { table, key } => {
                if self.mirror_state(&table, &key, None) {
                    self.enqueue(&table, &key, None);
                }
            }
            Input::ApplStateSet { table, key, fields } => {
                self.appl_state
                    .entry(table)
                    .or_default()
                    .insert(key, fields);
                self.poll_block();
            }
            Input::ApplStateDel { table, key } => {
                if let Some(t) = self.appl_state.get_mut(&table) {
                    t.remove(&key);
                }
                self.poll_block();
            }
            Input::PortInitDone => self.port_init_done_seen = true,
        }
        self.schedule_retry();
    }

    /// The next output, if any.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.out.pop_front()
    }

    /// When [`BufferManager::handle_timeout`] must be called next.
    pub fn poll_timeout(&self) -> Option<Duration> {
        if let Some(b) = &self.block {
            return Some(b.next_poll);
        }
        Some(match self.retry_at {
            Some(r) => r.min(self.next_tick),
            None => self.next_tick,
        })
    }

    /// Runs what is due at `now`: a poll of an ordering wait, the retry of pending items, the
    /// periodic timer.
    pub fn handle_timeout(&mut self, now: Duration) {
        self.now = self.now.max(now);
        if let Some(b) = &mut self.block {
            if now < b.next_poll {
                return;
            }
            b.polls_left = b.polls_left.saturating_sub(1);
            b.next_poll = now + WAIT_POLL_INTERVAL;
            let expired = b.polls_left == 0;
            if !self.poll_block() && expired {
                let what = match self.block.take().map(|b| b.wait) {
                    Some(WaitFor::Profiles(_)) => "the rewritten lossless buffer profiles",
                    _ => "the shared headroom pool size (APPL_STATE_DB BUFFER_POOL_TABLE:ingress_lossless_pool.xoff)",
                };
                self.log(
                    LogLevel::Error,
                    format!(
                        "shared headroom pool toggle failed: orchagent did not confirm {what} within {WAIT_POLLS} polls; the toggle was not completed (the new setting is kept in memory; re-apply the configuration)"
                    ),
                );
                self.after_unblock();
            }
            return;
        }
        if self.retry_at.is_some_and(|r| now >= r) {
            self.retry_at = None;
            self.retry_all();
        }
        if now >= self.next_tick {
            while self.next_tick <= now {
                self.next_tick += TIMER_PERIOD;
            }
            self.timer_tick();
        }
        self.schedule_retry();
    }

    /// The APPL_DB buffer tables as written so far (ProducerStateTable semantics applied).
    pub fn appl_db(&self) -> RawDb {
        self.appl.clone()
    }

    /// The STATE_DB hashes the manager wrote (hardware tables, pool/profile mirrors,
    /// warm-restart state).
    pub fn state_db(&self) -> RawDb {
        self.state_out.clone()
    }

    /// The state of `port`, once its `PORT` entry has been processed.
    pub fn port_state(&self, port: &str) -> Option<PortState> {
        self.ports.get(port).filter(|p| p.known).map(|p| p.state)
    }

    /// Whether the buffer pools are ready (profiles and objects are being written).
    pub fn pools_ready(&self) -> bool {
        self.pool_ready
    }

    /// Whether every configured item has been applied and initialisation is over
    /// (`m_bufferCompletelyInitialized`).
    pub fn completely_initialized(&self) -> bool {
        self.completely_initialized
    }

    /// Whether the manager is inside an ordering wait of §7.9 (inputs are queued meanwhile).
    pub fn waiting_for_orchagent(&self) -> bool {
        self.block.is_some()
    }

    /// `(table, key)` of the CONFIG_DB / STATE_DB items queued for a retry.
    pub fn pending_items(&self) -> Vec<(String, String)> {
        self.todo
            .iter()
            .flat_map(|(t, m)| m.keys().map(move |k| (t.clone(), k.clone())))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Mellanox;

    fn manager() -> BufferManager {
        let mut m = BufferManager::new(Options::new(
            Model::Mellanox(Mellanox),
            AsicModel::Spectrum2,
        ))
        .expect("manager");
        while m.poll_output().is_some() {}
        m
    }

    #[test]
    fn start_up_writes_the_hardware_tables_and_needs_one_asic() {
        let mut opts = Options::new(Model::Mellanox(Mellanox), AsicModel::Spectrum1);
        let m = BufferManager::new(opts.clone()).expect("manager");
        let s = m.state_db();
        assert_eq!(s["ASIC_TABLE"]["MELLANOX-SPECTRUM"]["cell_size"], "96");
        assert_eq!(s[WARM_RESTART_TABLE]["buffermgrd"]["state"], "disabled");
        opts.hardware_tables.clear();
        assert_eq!(
            BufferManager::new(opts.clone()).err(),
            Some(BufMgrError::Asic(LookupError::NoAsic))
        );
        opts.hardware_tables
            .entry("ASIC_TABLE".into())
            .or_default()
            .insert("X".into(), to_fields(&[("cell_size", "x")]));
        assert!(matches!(
            BufferManager::new(opts),
            Err(BufMgrError::Tables(_))
        ));
    }

    #[test]
    fn a_delete_replaces_a_pending_set_and_a_set_follows_a_pending_delete() {
        let mut m = manager();
        let t = Duration::from_secs(1);
        let set = Input::config_set("BUFFER_PG", "Ethernet0|3-4", &[("profile", "nope")]);
        m.handle(t, set.clone());
        assert_eq!(m.pending_items().len(), 1);
        m.handle(t, Input::config_del("BUFFER_PG", "Ethernet0|3-4"));
        assert!(
            m.pending_items().is_empty(),
            "the delete of an unknown PG completes"
        );
        m.handle(t, set);
        let p = &m.todo["BUFFER_PG"]["Ethernet0|3-4"];
        assert!(!p.del && p.set.is_some());
    }

    #[test]
    fn unsubscribed_tables_only_feed_the_plugin_view() {
        let mut m = manager();
        let t = Duration::from_secs(1);
        m.handle(
            t,
            Input::config_set(
                "LOSSLESS_TRAFFIC_PATTERN",
                "AZURE",
                &[("mtu", "1500"), ("small_packet_percentage", "100")],
            ),
        );
        m.handle(
            t,
            Input::config_set(
                "DEVICE_METADATA",
                "localhost",
                &[("platform", "x86_64-nvidia_sn5600-r0")],
            ),
        );
        assert!(m.pending_items().is_empty());
        assert_eq!(m.cfg.traffic_pattern().map(|p| p.mtu), Some(1500));
        assert_eq!(m.model_number, Some(5600));
        assert!(m.poll_output().is_none());
    }
}
