from dbxray.app.main import main

main()
