package docker

import (
	"strings"
	"testing"
)

func TestImageFindings(t *testing.T) {
	own := Image{Ref: ChaosrunRepo + ":abc"}
	redis := Image{Ref: HostPrograms[0].Ref}
	yes := func(string) bool { return true }
	no := func(string) bool { return false }
	tests := []struct {
		name      string
		imgs      []Image
		installed func(string) bool
		want      []string // each finding: "ok DETAIL-PART" or "FIX FIX-PART"
	}{
		{"all there", []Image{own, redis}, yes, []string{"ok 1 chaosrun image(s)", "ok " + redis.Ref}},
		{"nothing built", nil, yes, []string{"FIX run `chaosrun images`", "FIX run `chaosrun images`"}},
		{"program not installed", []Image{own}, no, []string{"ok newest " + own.Ref, "FIX apt-get install " + HostPrograms[0].Package}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := imageFindings(tt.imgs, tt.installed)
			if len(got) != len(tt.want) {
				t.Fatalf("%d findings %+v, want %d", len(got), got, len(tt.want))
			}
			for i, w := range tt.want {
				kind, part, _ := strings.Cut(w, " ")
				f := got[i]
				if (kind == "ok") != (f.Fix == "") || !strings.Contains(f.Detail+f.Fix, part) {
					t.Errorf("finding %d = %+v, want %s containing %q", i, f, kind, part)
				}
			}
		})
	}
}
