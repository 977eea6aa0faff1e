package sshdoor_test

import (
	"context"
	"log/slog"
	"os"

	tea "charm.land/bubbletea/v2"

	"github.com/claimdeck/claimdeck/internal/sshdoor"
)

// greeting is the smallest model a door can serve: it greets the person
// the key belongs to and quits on any key.
type greeting struct{ s *sshdoor.Session }

func (g greeting) Init() tea.Cmd { return nil }

func (g greeting) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(tea.KeyPressMsg); ok {
		return g, tea.Quit
	}
	return g, nil
}

func (g greeting) View() tea.View {
	v := tea.NewView("hello " + g.s.Person + " (" + string(g.s.Role) + ")")
	v.WindowTitle = "claimdeck: " + g.s.Person
	return v
}

// Serve a model to the people of a keys file until ctx ends; SIGHUP reads
// the file again.
func ExampleServe() {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	err := sshdoor.Serve(ctx, sshdoor.Config{
		Listen:      "127.0.0.1:2222",
		KeysFile:    "/etc/claimdeck/ssh-keys",
		HostKeyPath: "/var/lib/claimdeck/" + sshdoor.HostKeyFile,
	}, func(_ context.Context, s *sshdoor.Session) (tea.Model, error) {
		return greeting{s}, nil
	}, log)
	if err != nil {
		log.Error("ssh", "error", err)
	}
}
