//! Reroutes of live channels: a hop asks once, holds the flow until everything it
//! forwarded is acknowledged, then moves the channel (with what it has queued here) to
//! another output. With nothing of the flow downstream, no packet can overtake another.

use super::{FlowChannelError, FlowChannels, InputChannel, OutputChannel};

impl FlowChannels {
    /// Channel (`in_port`, `id`)'s output is overloaded: whether this is the first time
    /// this hop asks for its reroute (it asks once per channel).
    pub fn ask_reroute(&mut self, (in_port, id): (u16, u16)) -> Result<bool, FlowChannelError> {
        let c = self.input_mut(in_port, id)?;
        Ok(c.mark(InputChannel::REROUTE_ASKED))
    }

    /// This hop takes the reroute of channel (`in_port`, `id`): its flow is held (see
    /// [`Self::is_rerouting`]) until [`Self::reroute`]. Whether it was not held already.
    pub fn hold_for_reroute(
        &mut self,
        (in_port, id): (u16, u16),
    ) -> Result<bool, FlowChannelError> {
        let c = self.input_mut(in_port, id)?;
        Ok(c.mark(InputChannel::REROUTING))
    }

    /// Channels waiting for their reroute, all ports.
    pub fn rerouting(&self) -> usize {
        self.inputs
            .iter()
            .flat_map(|t| t.entries.iter().flatten())
            .filter(|c| c.rerouting())
            .count()
    }

    /// Whether channel (`in_port`, `id`) waits for its reroute (its packets must not leave).
    pub fn is_rerouting(&self, (in_port, id): (u16, u16)) -> bool {
        self.input(in_port, id).is_some_and(|c| c.rerouting())
    }

    /// Moves channel (`in_port`, `id`), with nothing in flight, to output `out_port`
    /// (`to_host`: it leads to a host) and ends its reroute. Returns its id on the new
    /// output's link (the old one is released). Its packets queued here follow it; with
    /// nothing of it downstream, they cannot overtake any. A full output table refuses it
    /// ([`FlowChannelError::TableFull`]) and changes nothing; moving to its own output only
    /// ends the reroute.
    pub fn reroute(
        &mut self,
        (in_port, id): (u16, u16),
        (out_port, to_host, class): (u16, bool, u8),
    ) -> Result<Option<u16>, FlowChannelError> {
        let c = *self.input_mut(in_port, id)?;
        if c.flow_extent() > 0 {
            return Err(FlowChannelError::Counters {
                in_port,
                id,
                what: "rerouted with data in flight",
            });
        }
        if out_port == c.follow_port {
            self.input_mut(in_port, id)?.reroute &= !InputChannel::REROUTING;
            return Ok(c.out_id);
        }
        let out_id = if to_host {
            None
        } else {
            let entry = OutputChannel { in_port, in_id: id };
            let size = self.config.table_size;
            let rank = self.rank(class);
            Some(
                self.outputs
                    .get_mut(usize::from(out_port))
                    .and_then(|t| t.allocate_for(entry, rank))
                    .ok_or(FlowChannelError::TableFull {
                        port: out_port,
                        size,
                    })?,
            )
        };
        if let Some(old) = c.out_id {
            self.outputs[usize::from(c.follow_port)].release(old);
        }
        let c = self.input_mut(in_port, id)?;
        c.follow_port = out_port;
        c.out_id = out_id;
        c.reroute &= !InputChannel::REROUTING;
        Ok(out_id)
    }
}
