package config

import (
	"fmt"
	"strconv"
	"strings"
)

// parseWarmPool reads warm_pool (a size, or auto) and warm_pool_max into d.
// warm_pool_max is checked even without auto, so a bad value is reported
// where it is written rather than when auto is switched on later; without
// auto it is not used.
func parseWarmPool(settings map[string]string, where string, d *Droplet) error {
	max, err := wholeNumber(settings, KeyWarmPoolMax, 1, MaxWarmPool, DefaultWarmPoolMax,
		fmt.Sprintf("set it to the most ready droplets an auto-sized pool (warm_pool: auto) may keep per template (the default is %d) in %s", DefaultWarmPoolMax, where))
	if err != nil {
		return err
	}
	d.WarmPoolMax = max
	if strings.TrimSpace(settings[KeyWarmPool]) == WarmPoolAuto {
		d.WarmPoolAuto = true
		return nil
	}
	d.WarmPool, err = wholeNumber(settings, KeyWarmPool, 0, MaxWarmPool, 0,
		fmt.Sprintf("set it to how many ready droplets to keep per template while an event is active (0, the default, keeps none), or to %q to size the pool from its arrivals, in %s", WarmPoolAuto, where))
	return err
}

// wholeNumber reads key as a whole number from lo to hi, def when unset.
func wholeNumber(settings map[string]string, key string, lo, hi, def int, fix string) (int, error) {
	v := strings.TrimSpace(settings[key])
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, &Error{Key: key, Problem: fmt.Sprintf("%s is not a whole number from %d to %d", shown(v), lo, hi), Fix: fix}
	}
	return n, nil
}
