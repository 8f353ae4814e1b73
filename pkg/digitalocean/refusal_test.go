package digitalocean

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
)

func answer(status int, message string) error {
	return &godo.ErrorResponse{Response: &http.Response{StatusCode: status}, Message: message}
}

// Only 401, 403 and 422 say DigitalOcean applied nothing.
func TestIsRefusal(t *testing.T) {
	for status, want := range map[int]bool{401: true, 403: true, 422: true, 400: false, 404: false, 429: false, 500: false, 502: false} {
		if got := IsRefusal(answer(status, "x")); got != want {
			t.Errorf("%d: IsRefusal %v, want %v", status, got, want)
		}
	}
	if IsRefusal(errors.New("connection reset")) {
		t.Error("a lost answer is a refusal")
	}
}

// A refusal's message names the setting, its value, the Environment and
// template, and the fix; the token itself never appears.
func TestExplainNamesWhatWasRefused(t *testing.T) {
	o := Origin{Environment: "env-a", Template: "ubuntu", TokenSecret: "do-token"}
	values := map[string]string{"region": "mars1", "size": "s-99", "image": "nope-1"}
	value := func(key string) string { return values[key] }
	for _, c := range []struct {
		status        int
		message, want string
	}{
		{422, "You specified an invalid region for Droplet creation.",
			`DigitalOcean refused region "mars1" from Environment "env-a" (template "ubuntu"): You specified an invalid region for Droplet creation. Fix environment_specifics.region or template_mapping[ubuntu].region.`},
		{422, "You specified an invalid size for Droplet creation.", `refused size "s-99" from Environment "env-a"`},
		{422, "Size is not available in this region.", `refused size "s-99"`},
		{422, "You specified an invalid image for Droplet creation.", `refused image "nope-1"`},
		{422, "creating this/these droplet(s) will exceed your droplet limit", "droplet limit. Delete droplets or ask DigitalOcean"},
		{401, "Unable to authenticate you",
			`DigitalOcean rejected the API token in Secret "do-token" from Environment "env-a" (template "ubuntu"): Unable to authenticate you. Put a valid token`},
	} {
		got := Classify(answer(c.status, c.message)).Explain(o, value)
		if !strings.Contains(got, c.want) {
			t.Errorf("%d %q explained as %q, want it to contain %q", c.status, c.message, got, c.want)
		}
	}
}

func TestRefusedSettingReadsTheMessage(t *testing.T) {
	for message, want := range map[string]string{
		"You specified an invalid size for Droplet creation.":           config.KeySize,
		"Size is not available in this region.":                         config.KeySize,
		"You specified an invalid image for Droplet creation.":          config.KeyImage,
		"You specified an invalid region for Droplet creation.":         config.KeyRegion,
		"user_data is too long":                                         config.KeyUserData,
		"invalid vpc_uuid":                                              config.KeyVPCUUID,
		"tag names may only contain letters":                            config.KeyTags,
		"creating this/these droplet(s) will exceed your droplet limit": "",
	} {
		if got := RefusedSetting(Failure{Reason: "Rejected", Message: message}); got != want {
			t.Errorf("RefusedSetting(%q) = %q, want %q", message, got, want)
		}
	}
	if got := RefusedSetting(Failure{Reason: "Unauthorized", Message: "invalid region"}); got != config.KeyTokenSecret {
		t.Errorf("Unauthorized concerns %q, want the token", got)
	}
}

// A sold-out region sends the create to the next region; an image missing
// from a region is the config's fault and no reason to pass the region over.
func TestSoldOutIsTheSizeOrTheRegionNotTheImage(t *testing.T) {
	for message, want := range map[string]bool{
		"Size is not available in this region.":                            true,
		"Region is not available":                                          true,
		"The image you specified is not available in the selected region.": false,
		"creating this/these droplet(s) will exceed your droplet limit":    false,
	} {
		if got := IsSoldOut(answer(http.StatusUnprocessableEntity, message)); got != want {
			t.Errorf("IsSoldOut(422 %q) = %v, want %v", message, got, want)
		}
	}
	if IsSoldOut(answer(http.StatusInternalServerError, "Size is not available in this region.")) {
		t.Error("a 500 taken for a sold-out region")
	}
}
