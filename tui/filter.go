package tui

import (
	"github.com/claimdeck/claimdeck/model"
)

func matchNode(n *model.Node, f model.Filter) bool {
	for _, tm := range f.Terms {
		var ok bool
		switch tm.Field {
		case "", "node":
			ok = model.ContainsFold(n.Name, tm.Value)
		case "state":
			ok = model.ContainsFold(n.Status.String(), tm.Value)
		default:
			continue // a task's field says nothing of a node
		}
		if ok == tm.Not {
			return false
		}
	}
	return true
}

func matchActivity(a *activity, f model.Filter) bool {
	for _, tm := range f.Terms {
		var ok bool
		switch tm.Field {
		case "source":
			ok = model.ContainsFold(a.Source, tm.Value)
		case "agent":
			ok = model.ContainsFold(a.Actor, tm.Value)
		case "":
			ok = model.ContainsFold(a.Task, tm.Value) || model.ContainsFold(a.What, tm.Value)
		default:
			continue // a task's standing says nothing of a past event
		}
		if ok == tm.Not {
			return false
		}
	}
	return true
}
