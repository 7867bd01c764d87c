//! The connected daemon's run loop ([`Runtime`]): its connections, the manager's clock, how
//! events and timers are fed to the manager, how its outputs are written, and the
//! reconciliation after a fault (see the parent module for the wiring).
//!
//! Invariants: the APPL_DB writes of a burst (every event already received plus the timers
//! due) go out in one flush; a failed flush, a resubscription after a connection loss and
//! the start each lead to a reconciliation.

use super::*;

/// The manager's clock.
struct Clock {
    mode: ClockMode,
    origin: Instant,
    skew: Duration,
}

impl Clock {
    fn now(&self) -> Duration {
        match self.mode {
            ClockMode::Real => self.origin.elapsed() + self.skew,
            ClockMode::Manual => self.skew,
        }
    }
}

/// The connected daemon.
pub(super) struct Runtime {
    opts: DaemonOptions,
    handle: DaemonHandle,
    mgr: BufferManager,
    clock: Clock,
    producer: ProducerStateTable,
    state: Table,
    reader: ApplReader,
    backoff: Backoff,
    need_reconcile: bool,
    reconcile_due: Option<Instant>,
    lost: BTreeSet<Db>,
    threads: Vec<JoinHandle<()>>,
}

/// The subscriptions and connections of one start-up attempt.
struct Connections {
    producer: ProducerStateTable,
    state: Table,
    subs: Vec<(KeyspaceSubscriber, forward::Filter)>,
    preserved: RawDb,
}

fn table_names(names: &[&str]) -> Result<Vec<TableName>, SwssError> {
    names.iter().map(|n| TableName::new(*n)).collect()
}

impl Connections {
    fn open(opts: &DaemonOptions, reader: &mut ApplReader) -> Result<Connections, SwssError> {
        let ep = &opts.endpoint;
        let mut producer = ProducerStateTable::new(DbConnection::open(ep, Db::Appl)?);
        let state = Table::new(DbConnection::open(ep, Db::State)?);
        let preserved = if opts.manager.warm_reboot {
            reader.read(producer.connection(), &APPL_TABLES)?
        } else {
            RawDb::new()
        };
        let subs = vec![
            (
                KeyspaceSubscriber::subscribe(ep, Db::Config, &table_names(&CONFIG_TABLES)?)?,
                forward::Filter::All,
            ),
            (
                KeyspaceSubscriber::subscribe(ep, Db::State, &table_names(&STATE_TABLES)?)?,
                forward::Filter::All,
            ),
            (
                KeyspaceSubscriber::subscribe(
                    ep,
                    Db::ApplState,
                    &table_names(&APPL_STATE_TABLES)?,
                )?,
                forward::Filter::All,
            ),
            (
                KeyspaceSubscriber::subscribe(ep, Db::Appl, &table_names(&["PORT_TABLE"])?)?,
                forward::Filter::PortInitDone,
            ),
        ];
        Ok(Connections {
            producer,
            state,
            subs,
            preserved,
        })
    }
}

impl Runtime {
    /// Connects with backoff; `None` if stopped meanwhile.
    pub(super) fn connect(
        opts: DaemonOptions,
        rx: &Receiver<Msg>,
        handle: DaemonHandle,
    ) -> Result<Option<Runtime>, DaemonError> {
        let mut backoff = opts.backoff.clone();
        let mut reader = ApplReader::default();
        let conns = loop {
            if handle.is_stopped() {
                return Ok(None);
            }
            match Connections::open(&opts, &mut reader) {
                Ok(c) => break c,
                Err(e) => {
                    let wait = backoff.next_delay();
                    tracing::warn!(target: "bufmgrd", error = %e, retry_in = ?wait, "cannot connect to Redis; retrying");
                    // Wait for the backoff, or a stop.
                    match rx.recv_timeout(wait) {
                        Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => return Ok(None),
                        _ => {}
                    }
                }
            }
        };
        backoff.reset();
        // buffermgrd writes its -a/-p tables to STATE_DB before anything else: a Lua plugin
        // reads ASIC_TABLE there (the reconciliation then finds them as wanted).
        let mut conns = conns;
        for (table, entries) in &opts.manager.hardware_tables {
            let name = TableName::new(table.as_str()).map_err(DaemonError::Redis)?;
            for (key, fields) in entries {
                conns.state.replace(&name, key, fields.clone());
            }
        }
        if let Err(e) = conns.state.flush() {
            conns.state.discard();
            tracing::warn!(target: "bufmgrd", error = %e, "hardware tables not written yet; the reconciliation will");
        }
        let mut mopts = opts.manager.clone();
        mopts.start = Duration::ZERO;
        mopts.preserved_appl_db = conns.preserved;
        let mgr = BufferManager::new(mopts)?;
        let mut rt = Runtime {
            clock: Clock {
                mode: opts.clock,
                origin: Instant::now(),
                skew: Duration::ZERO,
            },
            opts,
            handle,
            mgr,
            producer: conns.producer,
            state: conns.state,
            reader,
            backoff,
            need_reconcile: true,
            reconcile_due: Some(Instant::now()),
            lost: BTreeSet::new(),
            threads: Vec::new(),
        };
        // The initial enumeration, fed in table order: CONFIG_DB, STATE_DB, APPL_STATE_DB.
        let mut fed = 0usize;
        let mut subs = Vec::new();
        for (mut sub, filter) in conns.subs {
            let events = sub.poll(Duration::ZERO).unwrap_or_default();
            match filter {
                forward::Filter::All => {
                    let db = sub.db();
                    fed += events.len();
                    for e in in_dependency_order(events) {
                        rt.feed(db, e);
                    }
                    subs.push((sub, filter));
                }
                forward::Filter::PortInitDone => {
                    let seen = events.iter().any(
                        |e| matches!(e, ChangeEvent::Set { key, .. } if key == "PortInitDone"),
                    );
                    if seen {
                        rt.port_init_done(false);
                    } else {
                        subs.push((sub, filter));
                    }
                }
            }
        }
        for (sub, filter) in subs {
            let t = forward::spawn(
                sub,
                filter,
                rt.handle.tx.clone(),
                Arc::clone(&rt.handle.stop),
                Arc::clone(&rt.handle.shared.sub_round_trips),
                rt.opts.backoff.clone(),
            )
            .map_err(DaemonError::Thread)?;
            rt.threads.push(t);
        }
        rt.run_timers();
        rt.drain_outputs();
        if rt.opts.fast_start && rt.opts.clock == ClockMode::Real {
            rt.fast_forward();
        }
        rt.try_reconcile();
        rt.handle.shared.lock().started = true;
        tracing::info!(target: "bufmgrd", endpoint = ?rt.opts.endpoint.address, entries = fed, port_init_done = rt.handle.shared.lock().fed.port_init_done, "started");
        Ok(Some(rt))
    }

    pub(super) fn main_loop(&mut self, rx: &Receiver<Msg>) -> Result<(), DaemonError> {
        let mut acks: Vec<SyncSender<()>> = Vec::new();
        let mut inspects: Vec<InspectJob> = Vec::new();
        loop {
            if self.handle.is_stopped() {
                break;
            }
            let wait = self.wait_time();
            let first = match wait {
                Some(w) => match rx.recv_timeout(w) {
                    Ok(m) => Some(m),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => break,
                },
                None => match rx.recv() {
                    Ok(m) => Some(m),
                    Err(_) => break,
                },
            };
            let mut stop = false;
            let fed_before = self.handle.with_status(|s| s.events_fed);
            if let Some(m) = first {
                stop |= !self.on_msg(m, &mut acks, &mut inspects);
                // The rest of the burst.
                while let Ok(m) = rx.try_recv() {
                    stop |= !self.on_msg(m, &mut acks, &mut inspects);
                }
            }
            self.run_timers();
            self.drain_outputs();
            // Pools not ready (start-up, or every pool was removed and comes back, as after a
            // config reload): the next periodic tick would make them ready; run it now.
            if self.opts.fast_start
                && self.clock.mode == ClockMode::Real
                && !self.mgr.pools_ready()
                && self.handle.with_status(|s| s.events_fed) > fed_before
            {
                self.fast_forward();
            }
            if self.need_reconcile
                && self.lost.is_empty()
                && self.reconcile_due.is_some_and(|d| d <= Instant::now())
            {
                self.try_reconcile();
            }
            for f in inspects.drain(..) {
                f(&self.mgr);
            }
            for a in acks.drain(..) {
                let _ = a.send(());
            }
            if stop {
                break;
            }
        }
        tracing::info!(target: "bufmgrd", "stopping");
        self.handle.stop.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        Ok(())
    }

    /// How long the loop may block: until the manager's next timer (real clock) or the next
    /// reconciliation attempt; `None` = until a message.
    fn wait_time(&self) -> Option<Duration> {
        let mut wait = match self.clock.mode {
            ClockMode::Real => self
                .mgr
                .poll_timeout()
                .map(|t| t.saturating_sub(self.clock.now())),
            ClockMode::Manual => None,
        };
        if self.need_reconcile && self.lost.is_empty() {
            if let Some(due) = self.reconcile_due {
                let w = due.saturating_duration_since(Instant::now());
                wait = Some(wait.map_or(w, |x| x.min(w)));
            }
        }
        wait
    }

    /// Handles one message; false for a stop.
    fn on_msg(
        &mut self,
        msg: Msg,
        acks: &mut Vec<SyncSender<()>>,
        inspects: &mut Vec<InspectJob>,
    ) -> bool {
        match msg {
            Msg::Events {
                db,
                events,
                resynced,
            } => {
                let n = events.len();
                let events = if resynced {
                    in_dependency_order(events)
                } else {
                    events
                };
                for e in events {
                    self.feed(db, e);
                }
                if resynced {
                    self.lost.remove(&db);
                    self.handle.shared.lock().lost.remove(&db);
                    tracing::info!(target: "bufmgrd", db = %db, events = n, "subscription re-established; reconciling");
                    self.schedule_reconcile(Duration::ZERO);
                }
            }
            Msg::Lost { db, detail } => {
                tracing::warn!(target: "bufmgrd", db = %db, %detail, "subscription lost; resubscribing");
                self.lost.insert(db);
                let mut st = self.handle.shared.lock();
                st.lost.insert(db);
                st.connection_losses += 1;
            }
            Msg::PortInitDone => self.port_init_done(true),
            Msg::Stop => return false,
            Msg::Advance { by, ack } => {
                self.clock.skew += by;
                acks.push(ack);
            }
            Msg::Inspect(f) => inspects.push(f),
        }
        true
    }

    fn schedule_reconcile(&mut self, after: Duration) {
        self.need_reconcile = true;
        self.reconcile_due = Some(Instant::now() + after);
        self.handle.shared.lock().reconcile_pending = true;
    }

    fn port_init_done(&mut self, jump: bool) {
        {
            let mut st = self.handle.shared.lock();
            if st.fed.port_init_done {
                return;
            }
            st.fed.port_init_done = true;
            st.events_fed += 1;
        }
        tracing::info!(target: "bufmgrd", "PortInitDone");
        self.mgr.handle(self.clock.now(), Input::PortInitDone);
        if jump && self.opts.fast_start && self.clock.mode == ClockMode::Real {
            self.run_timers();
            self.drain_outputs();
            self.fast_forward();
        }
    }

    /// Fast start: runs the periodic timer at once, again as long as a tick still writes
    /// something (buffermgrd needs two ticks to settle the pools after its first
    /// computation), at most [`FAST_TICKS`] times. A tick that writes nothing ends it, so a
    /// deferral counted in ticks (the extra zero profiles) still takes its real time.
    fn fast_forward(&mut self) {
        for _ in 0..FAST_TICKS {
            self.jump_to_next_tick();
            self.run_timers();
            if self.drain_outputs() == 0 {
                break;
            }
        }
    }

    /// Moves the clock to the next multiple of the timer period (the next periodic tick).
    fn jump_to_next_tick(&mut self) {
        let now = self.clock.now();
        let p = TIMER_PERIOD.as_nanos().max(1);
        let next = (now.as_nanos() / p + 1) * p;
        let next = Duration::from_nanos(u64::try_from(next).unwrap_or(u64::MAX));
        self.clock.skew += next.saturating_sub(now);
    }

    /// Feeds one event unless the row is already as fed (see the module invariants).
    fn feed(&mut self, db: Db, ev: ChangeEvent) {
        let input = {
            let mut st = self.handle.shared.lock();
            let st = &mut *st;
            let view = match db {
                Db::Config => &mut st.fed.config,
                Db::State => &mut st.fed.state,
                Db::ApplState => &mut st.fed.appl_state,
                Db::Appl => return,
            };
            let input = match ev {
                ChangeEvent::Set { table, key, fields } => {
                    let t = view.entry(table.as_str().to_owned()).or_default();
                    if t.get(&key) == Some(&fields) {
                        st.events_skipped += 1;
                        return;
                    }
                    t.insert(key.clone(), fields.clone());
                    let table = table.as_str().to_owned();
                    match db {
                        Db::Config => Input::ConfigSet { table, key, fields },
                        Db::State => Input::StateSet { table, key, fields },
                        _ => Input::ApplStateSet { table, key, fields },
                    }
                }
                ChangeEvent::Del { table, key } => {
                    let name = table.as_str();
                    let removed = view.get_mut(name).and_then(|t| t.remove(&key)).is_some();
                    if view.get(name).is_some_and(|t| t.is_empty()) {
                        view.remove(name);
                    }
                    if !removed {
                        st.events_skipped += 1;
                        return;
                    }
                    let table = name.to_owned();
                    match db {
                        Db::Config => Input::ConfigDel { table, key },
                        Db::State => Input::StateDel { table, key },
                        _ => Input::ApplStateDel { table, key },
                    }
                }
            };
            st.events_fed += 1;
            input
        };
        self.mgr.handle(self.clock.now(), input);
    }

    /// Runs every timer due at the current time, in order.
    fn run_timers(&mut self) {
        let now = self.clock.now();
        for _ in 0..MAX_TIMER_STEPS {
            match self.mgr.poll_timeout() {
                Some(t) if t <= now => self.mgr.handle_timeout(t),
                _ => break,
            }
        }
    }

    /// Drains the manager's outputs: logs them, queues the writes (unless a reconciliation
    /// is pending) and flushes them in one APPL_DB script and one STATE_DB transaction.
    /// Returns the number of writes the manager asked for.
    fn drain_outputs(&mut self) -> usize {
        let record = self.opts.record;
        let mut writes = 0usize;
        let mut queued = (0u64, 0u64);
        while let Some(o) = self.mgr.poll_output() {
            if let Output::Log { level, message } = &o {
                log_line(*level, message);
                let mut st = self.handle.shared.lock();
                if record || *level <= LogLevel::Warning {
                    st.logs.push((*level, message.clone()));
                    if !record && st.logs.len() > LOG_KEEP {
                        let excess = st.logs.len() - LOG_KEEP;
                        st.logs.drain(..excess);
                    }
                }
                continue;
            }
            writes += 1;
            if !self.need_reconcile {
                if let Err(e) = self.queue(&o) {
                    tracing::error!(target: "bufmgrd", error = %e, "output not written");
                }
                match &o {
                    Output::ApplSet { .. } | Output::ApplDel { .. } => queued.0 += 1,
                    _ => queued.1 += 1,
                }
            }
            if record {
                self.handle.shared.lock().outputs.push(o);
            }
        }
        if self.need_reconcile || queued == (0, 0) {
            return writes;
        }
        match self.flush() {
            Ok(()) => {
                let mut st = self.handle.shared.lock();
                st.appl_ops += queued.0;
                st.state_ops += queued.1;
            }
            Err(e) => {
                self.producer.discard();
                self.state.discard();
                let wait = self.backoff.next_delay();
                tracing::warn!(target: "bufmgrd", error = %e, retry_in = ?wait, "write failed; will reconcile with Redis");
                self.handle.shared.lock().connection_losses += 1;
                self.schedule_reconcile(wait);
            }
        }
        writes
    }

    fn queue(&mut self, o: &Output) -> Result<(), SwssError> {
        match o {
            Output::ApplSet { table, key, fields } => {
                self.producer
                    .set(&TableName::new(table.as_str())?, key, fields.clone());
            }
            Output::ApplDel { table, key } => {
                self.producer.del(&TableName::new(table.as_str())?, key);
            }
            Output::StateSet { table, key, fields } => {
                self.state
                    .replace(&TableName::new(table.as_str())?, key, fields.clone());
            }
            Output::StateDel { table, key } => {
                self.state.del(&TableName::new(table.as_str())?, key);
            }
            Output::Log { .. } => {}
        }
        Ok(())
    }

    /// Flushes both write queues, counting round trips.
    fn flush(&mut self) -> Result<(), SwssError> {
        let before = self.write_round_trips();
        let r = self.producer.flush().and_then(|_| self.state.flush());
        let used = self.write_round_trips() - before;
        let mut st = self.handle.shared.lock();
        st.write_round_trips += used;
        if r.is_ok() {
            st.flushes += 1;
            st.last_flush = Some(Instant::now());
        }
        r.map(|_| ())
    }

    fn write_round_trips(&mut self) -> u64 {
        self.producer.connection().round_trips() + self.state.connection().round_trips()
    }

    /// Reads Redis and writes the differences from the manager's mirror.
    fn try_reconcile(&mut self) {
        if !self.need_reconcile || !self.lost.is_empty() {
            return;
        }
        match self.reconcile() {
            Ok((a, s)) => {
                self.need_reconcile = false;
                self.reconcile_due = None;
                self.backoff.reset();
                let mut st = self.handle.shared.lock();
                st.reconciles += 1;
                st.reconcile_pending = false;
                st.appl_ops += a as u64;
                st.state_ops += s as u64;
                drop(st);
                tracing::info!(target: "bufmgrd", appl_ops = a, state_ops = s, "reconciled APPL_DB and STATE_DB with the buffer manager");
            }
            Err(e) => {
                self.producer.discard();
                self.state.discard();
                let wait = self.backoff.next_delay();
                tracing::warn!(target: "bufmgrd", error = %e, retry_in = ?wait, "reconciliation failed; retrying");
                self.reconcile_due = Some(Instant::now() + wait);
            }
        }
    }

    fn reconcile(&mut self) -> Result<(usize, usize), SwssError> {
        let before = self.write_round_trips();
        let result = self.reconcile_inner();
        let used = self.write_round_trips() - before;
        self.handle.shared.lock().write_round_trips += used;
        result
    }

    fn reconcile_inner(&mut self) -> Result<(usize, usize), SwssError> {
        let actual = self.reader.read(self.producer.connection(), &APPL_TABLES)?;
        let desired = self.mgr.appl_db();
        let ops = appl_diff(&desired, &actual, &APPL_TABLES);
        let desired_state = self.mgr.state_db();
        let names: BTreeSet<&str> = desired_state
            .keys()
            .map(String::as_str)
            .chain(OWNED_STATE_TABLES)
            .collect();
        let tables: Vec<TableName> = names
            .into_iter()
            .map(TableName::new)
            .collect::<Result<_, _>>()?;
        let mut actual_state = RawDb::new();
        for e in self.state.enumerate(&tables)? {
            actual_state
                .entry(e.table.as_str().to_owned())
                .or_default()
                .insert(e.key, e.fields);
        }
        let sops = state_diff(&desired_state, &actual_state);
        for o in ops.iter().chain(&sops) {
            self.queue(o)?;
        }
        self.producer.flush()?;
        self.state.flush()?;
        let mut st = self.handle.shared.lock();
        st.flushes += 1;
        st.last_flush = Some(Instant::now());
        Ok((ops.len(), sops.len()))
    }
}

/// Orders a batch of a (re)enumeration so that few items need a retry: deletions first,
/// dependants before what they depend on; then sets, dependencies first (pools before
/// profiles before PGs). Within a table the subscriber's order is kept.
fn in_dependency_order(mut events: Vec<ChangeEvent>) -> Vec<ChangeEvent> {
    let rank = |t: &TableName| match t.as_str() {
        "DEVICE_METADATA" => 0,
        "LOSSLESS_TRAFFIC_PATTERN" => 1,
        "BUFFER_POOL" => 2,
        "DEFAULT_LOSSLESS_BUFFER_PARAMETER" => 3,
        "PORT" => 4,
        "CABLE_LENGTH" => 5,
        "BUFFER_PROFILE" => 6,
        "BUFFER_PG" => 7,
        "BUFFER_QUEUE" => 8,
        _ => 9,
    };
    events.sort_by_key(|e| match e {
        ChangeEvent::Del { table, .. } => (0, 9 - rank(table)),
        ChangeEvent::Set { table, .. } => (1, rank(table)),
    });
    events
}

/// Emits a manager log line through `tracing` (Error → error, Warning → warn, Notice →
/// info, Info → debug).
fn log_line(level: LogLevel, message: &str) {
    match level {
        LogLevel::Error => tracing::error!(target: "bufmgrd", "{message}"),
        LogLevel::Warning => tracing::warn!(target: "bufmgrd", "{message}"),
        LogLevel::Notice => tracing::info!(target: "bufmgrd", "{message}"),
        LogLevel::Info => tracing::debug!(target: "bufmgrd", "{message}"),
    }
}
