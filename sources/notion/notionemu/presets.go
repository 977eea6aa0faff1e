package notionemu

import "encoding/json"

// The presets are the databases the seeds describe, with the property names
// and select vocabularies their documents use. They are functions so that
// every caller gets its own copy to adjust.

// PresetNtask is the seed 002 "ntask" task database: a pull queue with a
// lock token and a lease expiry per task, and a TASK-n unique id.
func PresetNtask() DatabaseSchema {
	return DatabaseSchema{
		Title: "Tasks",
		Properties: []Property{
			{Name: "Name", Type: TypeTitle},
			{Name: "ID", Type: TypeUniqueID, Prefix: "TASK"},
			{Name: "Status", Type: TypeSelect, Options: []string{"READY", "IN_PROGRESS", "DONE", "BLOCKED", "REVIEW", "CANCELED"}},
			{Name: "Class", Type: TypeSelect, Options: []string{"EXPEDITE", "FIXED_DATE", "STANDARD", "INTANGIBLE"}},
			{Name: "Priority", Type: TypeNumber},
			{Name: "Claimed By", Type: TypeSelect, Options: []string{"AGENT", "HUMAN"}},
			{Name: "Agent Run", Type: TypeRichText},
			{Name: "Agent", Type: TypeRichText},
			{Name: "Lock Token", Type: TypeRichText},
			{Name: "Lock Expires", Type: TypeDate},
			{Name: "StartedAt", Type: TypeDate},
			{Name: "DoneAt", Type: TypeDate},
			{Name: "Artifacts", Type: TypeRichText},
			{Name: "BlockerReason", Type: TypeRichText},
			{Name: "UnblockAction", Type: TypeRichText},
			{Name: "NextCheckAt", Type: TypeDate},
			{
				Name: "Dependencies", Type: TypeRollup,
				Config: json.RawMessage(`{"relation_property_name":"Sub-tasks","relation_property_id":"subt","rollup_property_name":"Status","rollup_property_id":"stat","function":"count"}`),
				Value:  json.RawMessage(`{"type":"number","number":0,"function":"count"}`),
			},
		},
	}
}

// PresetClaimProtocol is the seed 000 task database: OPEN tasks claimed by
// name with a claim time and a per-task timeout.
func PresetClaimProtocol() DatabaseSchema {
	return DatabaseSchema{
		Title: "Tasks",
		Properties: []Property{
			{Name: "Description", Type: TypeTitle},
			{Name: "status", Type: TypeSelect, Options: []string{"OPEN", "IN_PROGRESS", "BLOCKED", "COMPLETED", "CANCELLED"}},
			{Name: "claimed_by", Type: TypeRichText},
			{Name: "claimed_at", Type: TypeDate},
			{Name: "claim_timeout_minutes", Type: TypeNumber},
		},
	}
}

// PresetMeshHandoff is the seed 001 task database: the seed 000 claim
// fields plus a hand-off status and a JSON hand-off history.
func PresetMeshHandoff() DatabaseSchema {
	return DatabaseSchema{
		Title: "Tasks",
		Properties: []Property{
			{Name: "Description", Type: TypeTitle},
			{Name: "status", Type: TypeSelect, Options: []string{"queued", "claimed", "in_progress", "completed", "failed", "stale"}},
			{Name: "claimed_by", Type: TypeRichText},
			{Name: "claimed_at", Type: TypeDate},
			{Name: "claim_timeout_minutes", Type: TypeNumber},
			{Name: "handoff_status", Type: TypeSelect, Options: []string{"available", "claimed", "stale", "escalated"}},
			{Name: "handoff_history", Type: TypeRichText},
			{Name: "priority", Type: TypeSelect, Options: []string{"normal", "urgent", "critical"}},
		},
	}
}

// PresetHandoffQueue is seed 001's Handoff Queue database of explicit
// hand-offs between agents.
func PresetHandoffQueue() DatabaseSchema {
	return DatabaseSchema{
		Title: "Handoff Queue",
		Properties: []Property{
			{Name: "Name", Type: TypeTitle},
			{Name: "from_agent", Type: TypeRichText},
			{Name: "to_agent", Type: TypeRichText},
			{Name: "reason", Type: TypeRichText},
			{Name: "priority", Type: TypeSelect, Options: []string{"normal", "urgent", "critical"}},
			{Name: "taskId", Type: TypeRichText},
			{Name: "assignedAgent", Type: TypeRichText},
			{Name: "status", Type: TypeSelect, Options: []string{"pending", "processing", "done"}},
			{Name: "stagedAt", Type: TypeDate},
			{Name: "processedAt", Type: TypeDate},
		},
	}
}

// PresetToday is the task database today's notion-task skill sets up
// (21-DOT-DEV/openclaw-skills at 75590fd, references/schema.md): Notion's
// status type in three groups, priority 1-3 (higher is more urgent), a
// TASK-n unique id, the Assignee person, and sub-tasks counted by rollups
// over the Sub-tasks relation.
func PresetToday() DatabaseSchema {
	text := func(n string) Property { return Property{Name: n, Type: TypeRichText} }
	date := func(n string) Property { return Property{Name: n, Type: TypeDate} }
	return DatabaseSchema{
		Title: "Tasks",
		Properties: []Property{
			{Name: "Task name", Type: TypeTitle},
			{Name: "ID", Type: TypeUniqueID, Prefix: "TASK"},
			{
				Name: "Status", Type: TypeStatus,
				Options: []string{"Backlog", "Ready", "In Progress", "Blocked", "Review", "Done", "Canceled"},
				Groups: []StatusGroup{
					{Name: "To-do", Options: []string{"Backlog", "Ready"}},
					{Name: "In Progress", Options: []string{"In Progress", "Blocked", "Review"}},
					{Name: "Complete", Options: []string{"Done", "Canceled"}},
				},
			},
			{Name: "Priority", Type: TypeNumber},
			{Name: "Class", Type: TypeSelect, Options: []string{"Expedite", "Fixed Date", "Standard", "Intangible"}},
			{Name: "Assignee", Type: TypePeople},
			{Name: "Due", Type: TypeDate},
			{Name: "Sub-tasks", Type: TypeRelation, Synced: "Parent-task"},
			{Name: "Parent-task", Type: TypeRelation, Synced: "Sub-tasks"},
			text("Summary"),
			{Name: "URL", Type: TypeURL},
			text("Agent Run"), text("Lock Token"), date("Lock Expires"),
			text("Blocker Reason"), text("Unblock Action"),
			date("Next Check At"), date("Started At"), date("Done At"),
			{
				Name: "Dependencies", Type: TypeRollup,
				Config: json.RawMessage(`{"relation_property_name":"Sub-tasks","rollup_property_name":"Status","function":"count"}`),
			},
			{
				Name: "Completed Sub-tasks", Type: TypeRollup,
				Config: json.RawMessage(`{"relation_property_name":"Sub-tasks","rollup_property_name":"Status","function":"count_per_group"}`),
			},
		},
	}
}
