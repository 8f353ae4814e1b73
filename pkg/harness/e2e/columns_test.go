package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// tableAccept asks for the server-side Table kubectl prints.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"

// printedRow is one row of `kubectl get <resource>`: cell by column name,
// all columns (wide included), and which columns only -o wide shows.
type printedRow struct {
	cells map[string]string
	wide  map[string]bool
}

// String prints the row as kubectl -o wide would, for failure messages.
func (r printedRow) String() string {
	var out []string
	for name, cell := range r.cells {
		out = append(out, name+"="+cell)
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// printed returns name's row of `kubectl get resource` in w's namespace, or
// why there is none, from the server-side Table: the CRD's printer columns
// as the API server evaluates them.
func (w *world) printed(resource, name string) (printedRow, string) {
	raw, err := w.kube.CoreV1().RESTClient().Get().
		AbsPath("/apis", v1alpha1.SchemeGroupVersion.Group, v1alpha1.SchemeGroupVersion.Version, "namespaces", w.ns, resource).
		Param("includeObject", "Object").
		SetHeader("Accept", tableAccept).
		DoRaw(context.Background())
	if err != nil {
		return printedRow{}, err.Error()
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		return printedRow{}, err.Error()
	}
	for _, r := range table.Rows {
		row := printedRow{cells: map[string]string{}, wide: map[string]bool{}}
		for i, col := range table.ColumnDefinitions {
			if i < len(r.Cells) && r.Cells[i] != nil {
				row.cells[col.Name] = fmt.Sprint(r.Cells[i])
			}
			row.wide[col.Name] = col.Priority > 0
		}
		if row.cells["Name"] == name {
			return row, ""
		}
	}
	return printedRow{}, fmt.Sprintf("no %s row for %q among %d", resource, name, len(table.Rows))
}

// problemShown says what is missing for row to show state in the default
// view and a message containing message in -o wide only.
func problemShown(row printedRow, state, message string) string {
	switch {
	case row.wide["State"] || !row.wide["Message"]:
		return "STATE must be a default column and MESSAGE a wide one: " + row.String()
	case row.cells["State"] != state:
		return fmt.Sprintf("STATE %q, want %q: %s", row.cells["State"], state, row)
	case !strings.Contains(row.cells["Message"], message):
		return fmt.Sprintf("MESSAGE %q, want it to contain %q", row.cells["Message"], message)
	}
	return ""
}

func TestColumnsNameWhatIsWrong(t *testing.T) {
	for _, c := range badInputCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w, _ := startBadInput(t, c)
			_, reason := c.failing()
			resource := "droplets"
			if c.on == "key" {
				resource = "keys"
			}
			w.eventually(30*time.Second, "kubectl get "+resource+" naming "+reason, func() string {
				row, missing := w.printed(resource, "bad")
				if missing != "" {
					return missing
				}
				return problemShown(row, reason, c.contains)
			})
			if c.on == "key" {
				// The Droplet waits for the Key and says what stops it.
				w.eventually(30*time.Second, "kubectl get droplets naming the Key's problem", func() string {
					row, missing := w.printed("droplets", "bad")
					if missing != "" {
						return missing
					}
					return problemShown(row, v1alpha1.ReasonWaitingForKey, "the Key is "+reason+": "+c.contains)
				})
			}
		})
	}
}

func TestColumnsFollowAGoodVMToActive(t *testing.T) {
	// A slow boot, so that the stages before Active last long enough to be seen.
	w := newWorld(t, worldOptions{fake: fakedo.Options{BootDelay: 2 * time.Second}})
	env := w.standardEnv("env")
	w.createVM("good", env, "ubuntu")

	onTheWay := []string{v1alpha1.DropletStateCreating, v1alpha1.ReasonWaitingForKey, v1alpha1.DropletStateBooting}
	var seen []string
	w.eventually(60*time.Second, "droplet Active", func() string {
		row, missing := w.printed("droplets", "good")
		if missing != "" {
			return missing
		}
		state := row.cells["State"]
		if state == "" {
			// Made, and not yet written by the controller.
			return "no STATE yet"
		}
		if len(seen) == 0 || seen[len(seen)-1] != state {
			seen = append(seen, state)
		}
		if state != v1alpha1.DropletStateActive && !slices.Contains(onTheWay, state) {
			t.Fatalf("STATE %q on the way to Active (seen %v): %s", state, seen, row)
		}
		if row.cells["Message"] == "" {
			t.Fatalf("no MESSAGE for STATE %q: %s", state, row)
		}
		if state != v1alpha1.DropletStateActive {
			return "STATE " + state
		}
		return ""
	})
	t.Logf("STATE went %v", seen)
	if !slices.Contains(seen, v1alpha1.DropletStateCreating) && !slices.Contains(seen, v1alpha1.DropletStateBooting) {
		t.Errorf("STATE went %v: no Creating or Booting before Active", seen)
	}
	// The VM's own key goes from DigitalOcean once its droplet exists.
	w.eventually(30*time.Second, "the Key shown Retired", func() string {
		row, missing := w.printed("keys", "good")
		if missing != "" {
			return missing
		}
		return problemShown(row, v1alpha1.KeyStateRetired, "deleted in DigitalOcean once droplet")
	})
}
