package instance

// testData is an instance with every field set, secrets included.
func testData() *Data {
	idx := 0
	return &Data{
		Datasource: "configdrive", DatasourceClass: "ConfigDrive",
		CloudName:        "openstack",
		Platform:         "openstack",
		Subplatform:      "config-disk (/dev/sr0)",
		InstanceID:       "83679162-1378-4288-a2d4-70e13ec132aa",
		LocalHostname:    "web-1.example.com",
		AvailabilityZone: "nova",
		PublicKeys:       []string{"ssh-ed25519 AAAA first", "ssh-rsa BBBB second"},
		LaunchIndex:      &idx,
		UserData:         []byte("#cloud-config\r\nruncmd: [\"\\x00\"]\x00\xff"),
		VendorData:       []byte("#cloud-config\nvendor: 1\n"),
		VendorData2:      []byte("#cloud-config\nvendor: 2\n"),
		AdminPass:        "hunter2-admin",
		RandomSeed:       []byte("\x00\x01seed-bytes\xff"),
		Meta: map[string]any{
			"uuid":           "83679162-1378-4288-a2d4-70e13ec132aa",
			"local-hostname": "web-1.example.com",
			"meta":           map[string]any{"role": "web"},
		},
	}
}
