//! `rocwasm avail list|info|pmc-check`: the GPUs' hardware counters, laid
//! out as rocprofv3-avail lays them out. The agents and what they can
//! count are `rocwasm_launch::counters`'s; this module only prints.

use rocwasm_counters::{Body, Kind};
use rocwasm_launch::counters::{self, Agent};

use crate::cli::{AvailArgs, AvailCommand};
use crate::failure::{Failure, Result};

pub fn avail(args: AvailArgs) -> Result {
    let defs = counters::definitions(args.counter_defs.as_deref())?;
    let all = counters::agents(&defs)?;
    let agents: Vec<&Agent> = match args.device {
        None => all.iter().collect(),
        Some(d) => {
            let agent = all.get(d).ok_or_else(|| {
                Failure::usage(format!(
                    "there is no GPU {d} (the GPUs are 0..{})",
                    all.len().saturating_sub(1)
                ))
            })?;
            vec![agent]
        }
    };
    match args.command {
        AvailCommand::List { pmc, agent } => {
            for a in &agents {
                if agent {
                    list_agent(a);
                }
                if pmc || !agent {
                    list_pmc(a);
                }
            }
            Ok(())
        }
        AvailCommand::Info { pmc } => info(&agents, pmc.as_deref().unwrap_or_default()),
        AvailCommand::PmcCheck { counters } => pmc_check(&all, &agents, &counters),
    }
}

fn list_agent(a: &Agent) {
    println!("GPU:{}", a.index);
    let p = |name: &str, value: String| println!("{name:30}:\t{value}");
    for c in &a.catalog.counters {
        if c.kind == Kind::Constant {
            if let Ok(v) = a.catalog.evaluate(&c.name, &a.hardware) {
                p(&c.name, format!("{}", v.total()));
            }
        }
    }
    p("name", a.arch.clone());
    p("product_name", a.product.clone());
    p("logical_node_type_id", a.index.to_string());
    println!();
}

fn list_pmc(a: &Agent) {
    println!("{:30}:\t{}", "GPU", a.index);
    println!("{:30}:\t{}", "Name", a.arch);
    println!("{:30}:", "PMC");
    println!();
    let names: Vec<String> = a
        .catalog
        .counters
        .iter()
        .filter(|c| c.kind != Kind::Constant)
        .map(|c| match a.unsupported(&c.name) {
            None => c.name.clone(),
            Some(_) => format!("{}*", c.name),
        })
        .collect();
    let width = names.iter().map(String::len).max().unwrap_or(0);
    let columns = (120 / (width + 1)).max(1);
    for row in names.chunks(columns) {
        let cells: Vec<String> = row.iter().map(|n| format!("{n:width$}")).collect();
        println!("{}", cells.join(" ").trim_end());
    }
    if names.iter().any(|n| n.ends_with('*')) {
        println!();
        println!(
            "* not modelled by the simulated {}: unsupported (`rocwasm avail info --pmc NAME` says why)",
            a.arch
        );
    }
    println!();
}

fn info(agents: &[&Agent], only: &[String]) -> Result {
    for name in only {
        if !agents.iter().any(|a| a.catalog.get(name).is_some()) {
            return Err(unknown(agents, name));
        }
    }
    for a in agents {
        println!("GPU:{}", a.index);
        println!("Name:{}", a.arch);
        for c in &a.catalog.counters {
            if !only.is_empty() && !only.contains(&c.name) {
                continue;
            }
            let p = |key: &str, value: &str| println!("{key:20}:\t{value}");
            p("Counter_Name", &c.name);
            p("Description", &c.description);
            match &c.kind {
                Kind::Constant => {}
                Kind::Defined(Body::Hardware { block, .. }) => p("Block", block),
                Kind::Defined(Body::Derived { text, .. }) => p("Expression", text),
            }
            if c.kind != Kind::Constant {
                match a.catalog.dimensions_text(&c.name, &a.hardware) {
                    Ok(dims) => p("Dimensions", &dims),
                    Err(why) => p("Unsupported", &format!("on the simulated GPU: {why}")),
                }
            }
            println!();
        }
    }
    Ok(())
}

fn unknown(agents: &[&Agent], name: &str) -> Failure {
    let mut near: Vec<&str> = agents
        .iter()
        .flat_map(|a| a.catalog.nearest(name, 3))
        .collect();
    near.sort();
    near.dedup();
    if near.is_empty() {
        Failure::usage(format!("unknown counter {name}"))
    } else {
        Failure::usage(format!(
            "unknown counter {name}: did you mean {}?",
            near.join(", ")
        ))
    }
}

fn pmc_check(all: &[Agent], agents: &[&Agent], names: &[String]) -> Result {
    let requested = counters::parse_pmc(names)?;
    for r in &requested {
        if let Some(d) = r.device {
            if d >= all.len() {
                return Err(Failure::usage(format!(
                    "counter {}:device={d}: there is no GPU {d}",
                    r.name
                )));
            }
        }
        if !agents.iter().any(|a| a.catalog.get(&r.name).is_some()) {
            return Err(unknown(agents, &r.name));
        }
    }
    let mut failed = false;
    for a in agents {
        let mine: Vec<&str> = requested
            .iter()
            .filter(|r| r.device.is_none_or(|d| d == a.index))
            .map(|r| r.name.as_str())
            .collect();
        if mine.is_empty() {
            continue;
        }
        let why = mine
            .iter()
            .find_map(|n| {
                if a.catalog.get(n).is_none() {
                    Some(format!("{n} is not a counter of {}", a.arch))
                } else {
                    a.unsupported(n)
                        .map(|w| format!("on the simulated GPU: {w}"))
                }
            })
            .or_else(|| a.catalog.check_one_pass(&mine).err().map(|e| e.to_string()));
        match why {
            None => println!(
                "Following input counters can be collected together on GPU:{}\t{}",
                a.index,
                mine.join("\t")
            ),
            Some(why) => {
                failed = true;
                eprintln!(
                    "{} not collected together on GPU:{} ({}): {why}",
                    mine.join(" "),
                    a.index,
                    a.arch
                );
            }
        }
    }
    if failed {
        return Err(Failure::runtime(
            "the counters cannot be collected together in one pass",
        ));
    }
    Ok(())
}
