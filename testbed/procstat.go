package testbed

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// ProcStat reads the fields of /proc/PID/stat that follow the command
// name: stat[0] is the state (field 3 of proc(5)), stat[2] the process
// group, stat[19] the start time. ok is false when the process is gone.
func ProcStat(pid int) (stat []string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, false
	}
	// The command name, in parentheses, may hold blanks: split after it.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(string(b[i+1:])), true
}
