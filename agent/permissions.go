package agent

import (
	"fmt"
	"strings"

	"github.com/fido-nvim/fido/tools/permission"
)

// permissionsHeader explains the /permissions buffer.
var permissionsHeader = []string{
	"# Fido's command rules for bash_exec. Delete a line and :w to remove that rule.",
	"# Rules from setup({ permissions = … }) (config) are changed in your config.",
	"# A command runs unasked only when every command in it matches an allow rule;",
	"# a deny rule refuses at once.",
}

// PermissionLines renders rules as the /permissions buffer shows them.
func PermissionLines(rules []permission.Rule) []string {
	lines := append([]string(nil), permissionsHeader...)
	if len(rules) == 0 {
		lines = append(lines, "# (no rules yet: \"Always …\" in an approval adds one)")
	}
	for _, r := range rules {
		lines = append(lines, fmt.Sprintf("%s  [%s]", r.String(), r.Origin))
	}
	return lines
}

// parsePermissionLine reads one line of the buffer back.
func parsePermissionLine(line string) (permission.Rule, bool, error) {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return permission.Rule{}, false, nil
	}
	origin := permission.OriginWorkspace
	if i := strings.LastIndex(line, "["); i >= 0 && strings.HasSuffix(line, "]") {
		origin = permission.Origin(strings.TrimSpace(line[i+1 : len(line)-1]))
		line = strings.TrimSpace(line[:i])
	}
	r, err := permission.ParseRule(line)
	r.Origin = origin
	return r, true, err
}

// cmdPermissions shows the rules in an editable buffer, or as a notice
// without one.
func cmdPermissions(s *Session, _ string) {
	if s.cfg.Permissions == nil {
		s.screen.Notice("command rules are not available in this session")
		return
	}
	ed, ok := s.editor.(PermissionsEditor)
	if !ok {
		s.screen.Notice(strings.Join(PermissionLines(s.cfg.Permissions.All()), "\n"))
		return
	}
	ed.EditPermissions(PermissionLines(s.cfg.Permissions.All()))
}

// SavePermissions keeps the rules whose lines are still in the buffer and
// removes the other session and workspace rules (new lines are not added:
// rules come from approvals and setup()).
func (s *Session) SavePermissions(lines []string) {
	if s.cfg.Permissions == nil {
		return
	}
	var keep []permission.Rule
	for _, l := range lines {
		r, ok, err := parsePermissionLine(l)
		if err != nil {
			s.screen.Error("/permissions: " + err.Error() + "; nothing was changed")
			return
		}
		if ok {
			keep = append(keep, r)
		}
	}
	removed, err := s.cfg.Permissions.Keep(keep)
	if err != nil {
		s.screen.Error("/permissions: " + err.Error())
		return
	}
	s.screen.Notice(fmt.Sprintf("/permissions: %d rule(s) removed", removed))
	if ed, ok := s.editor.(PermissionsEditor); ok {
		ed.EditPermissions(PermissionLines(s.cfg.Permissions.All()))
	}
}
