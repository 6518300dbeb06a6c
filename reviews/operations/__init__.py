"""Operations of the desk: daily rollups and drift alerts, task timings, the Prometheus
exposition, method upgrades, and the application's database role."""
